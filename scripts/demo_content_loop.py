"""Demo conversations of the Loop store, in demo_content.py's neutral form (read there how a
session is written)."""

from demo_content import (  # noqa: E402
    A,
    B,
    E,
    ERR,
    G,
    HANDBOOK,
    HARBOR,
    LEDGERLY,
    PIXELFORGE,
    R,
    T,
    TINYHTTP,
    W,
    WEATHER,
)

ANSI_PLAYWRIGHT = (
    "e2e\tRun pnpm test:e2e\t2026-11-26T11:48:03Z \x1b[2m> pixelforge@0.18.2 test:e2e\x1b[22m\n"
    "e2e\tRun pnpm test:e2e\t2026-11-26T11:48:03Z \x1b[2m> playwright test\x1b[22m\n"
    "e2e\tRun pnpm test:e2e\t2026-11-26T11:48:04Z [WebServer] > pixelforge@0.18.2 build\n"
    "e2e\tRun pnpm test:e2e\t2026-11-26T11:48:04Z [WebServer] > tsc -b && vite build\n"
    "e2e\tRun pnpm test:e2e\t2026-11-26T11:49:04Z \x1b[31mError: Timed out waiting 60000ms from config.webServer.\x1b[39m\n"
    "e2e\tRun pnpm test:e2e\t2026-11-26T11:49:04Z \n"
    "e2e\tRun pnpm test:e2e\t2026-11-26T11:49:04Z \x1b[31m\x1b[1m  0 passed\x1b[22m\x1b[39m \x1b[2m(60.4s)\x1b[22m\n"
    "e2e\tRun pnpm test:e2e\t2026-11-26T11:49:05Z ##[error]Process completed with exit code 1."
)

E2E_YML = """name: e2e
on:
  push:
    branches: [main]
  pull_request:
jobs:
  e2e:
    runs-on: ubuntu-latest
    timeout-minutes: 20
    steps:
      - uses: actions/checkout@v4
      - uses: pnpm/action-setup@v4
      - uses: actions/setup-node@v4
        with:
          node-version: 22
          cache: pnpm
      - run: pnpm install --frozen-lockfile
      - run: pnpm exec playwright install --with-deps chromium
      - run: pnpm test:e2e
        env:
          CI: true"""

PW_CONFIG = """import { defineConfig, devices } from '@playwright/test';

export default defineConfig({
  testDir: './e2e',
  fullyParallel: true,
  retries: process.env.CI ? 2 : 0,
  use: { baseURL: 'http://localhost:4173', trace: 'on-first-retry' },
  projects: [{ name: 'chromium', use: { ...devices['Desktop Chrome'] } }],
  webServer: {
    command: 'pnpm build && pnpm preview --port 4173',
    url: 'http://localhost:4173',
    reuseExistingServer: !process.env.CI,
    timeout: 60_000,
  },
});"""

CI_SESSION = [
    ("The e2e job on GitHub Actions has been failing since yesterday, but `pnpm test:e2e` passes on my "
     "machine every single time. Can you figure out what changed? It's failing on main.",
     T(B("gh run list --workflow e2e.yml --limit 6",
         "STATUS  TITLE                                         WORKFLOW  BRANCH  EVENT  ID           ELAPSED\n"
         "X       Merge pull request #412 from feat/layers-panel  e2e       main    push   11873420219  1m12s\n"
         "X       Run e2e against the production build          e2e       main    push   11873101554  1m09s\n"
         "✓       Bump @playwright/test to 1.49.1               e2e       main    push   11869954210  3m58s\n"
         "✓       Fix crop handle hit area on HiDPI             e2e       main    push   11867212093  4m03s\n"
         "✓       Layers panel: drag to reorder                 e2e       main    push   11866980417  4m11s\n"
         "✓       Merge pull request #405 from fix/export-jpeg  e2e       main    push   11861402388  3m49s"),
       think="Start from the run history: find the first red run and what landed with it."),
     T(B("gh run view 11873402219 --log-failed | tail -40",
         "HTTP 404: Not Found (https://api.github.com/repos/pixelforge/pixelforge/actions/runs/11873402219)",
         err=True),
       text="The first failure is the commit \"Run e2e against the production build\". Pulling the failed log."),
     T(B("gh run view 11873420219 --log-failed | tail -40", ANSI_PLAYWRIGHT),
       text="Typo in the run id; retrying with 11873420219."),
     T(R(".github/workflows/e2e.yml", E2E_YML), R("playwright.config.ts", PW_CONFIG),
       text="No test failed: Playwright never got a server. Reading the workflow and the config."),
     T(B("git log --oneline -6 -- playwright.config.ts .github/workflows package.json",
         "4e1c9d2 Run e2e against the production build\n"
         "b81a0f7 Bump @playwright/test to 1.49.1\n"
         "2c7d5e1 e2e: record traces on first retry\n"
         "91fe3aa ci: cache pnpm store\n"
         "5d0b6c4 e2e: add export smoke test\n"
         "e03a7b8 Add Playwright"),
       G("webServer", "playwright.config.ts", "playwright.config.ts:9:  webServer: {")),
     T(B("git show 4e1c9d2 -- playwright.config.ts",
         "commit 4e1c9d2\nAuthor: Mira Okafor <mira@pixelforge.dev>\n\n    Run e2e against the production build\n\n"
         "-    command: 'pnpm dev --port 4173',\n+    command: 'pnpm build && pnpm preview --port 4173',\n"
         "     url: 'http://localhost:4173',\n     reuseExistingServer: !process.env.CI,\n"
         "-    timeout: 30_000,\n+    timeout: 60_000,")),
     A("Found it. Commit `4e1c9d2` changed Playwright's `webServer.command` from `pnpm dev` to "
       "`pnpm build && pnpm preview`. Locally you always have a server running, and "
       "`reuseExistingServer: !process.env.CI` means Playwright just reuses it, so the build never happens "
       "inside the timeout. On CI there is no server, so the **build** now runs inside Playwright's "
       "`webServer.timeout` of 60 s, and the log shows it giving up after exactly 60 s "
       "(`Timed out waiting 60000ms from config.webServer`). Zero tests ran; nothing is flaky.\n\n"
       "The fix is to build in its own workflow step and have Playwright only start `vite preview`, "
       "which is up in under a second.")),
    ("Makes sense. Can you confirm how long the build actually takes on the runner though? I don't want to "
     "just bump the number blindly.",
     T(B("gh run view 11873420219 --log | grep -E 'vite v|built in|webServer' | head",
         "e2e\tRun pnpm test:e2e\t2026-11-26T11:48:04Z [WebServer] > tsc -b && vite build\n"
         "e2e\tRun pnpm test:e2e\t2026-11-26T11:48:41Z [WebServer] vite v6.0.3 building for production..."),
       think="The e2e log is cut at 60 s, so the build never finished there. The ci.yml workflow builds too; its log has the full time."),
     T(B("gh run list --workflow ci.yml --limit 3 --json databaseId,conclusion,headSha",
         '[{"conclusion":"success","databaseId":11873420187,"headSha":"a17f3c0"},'
         '{"conclusion":"success","databaseId":11873101502,"headSha":"4e1c9d2"},'
         '{"conclusion":"success","databaseId":11869954190,"headSha":"b81a0f7"}]'),
       B("gh run view 11873420187 --log | grep -E 'tsc -b|built in'",
         "build\tpnpm build\t2026-11-26T11:47:10Z > tsc -b && vite build\n"
         "build\tpnpm build\t2026-11-26T11:48:22Z ✓ built in 41.37s")),
     T(B("gh run view 11873101502 --log | grep -E 'tsc -b|built in'",
         "build\tpnpm build\t2026-11-26T09:12:51Z > tsc -b && vite build\n"
         "build\tpnpm build\t2026-11-26T09:14:05Z ✓ built in 43.02s"),
       B("nproc && pnpm build 2>&1 | tail -1", "16\n✓ built in 9.84s")),
     A("On the 2-core runner `tsc -b` takes about 30 s and `vite build` another 41–43 s, so the whole "
       "`pnpm build` is **72–74 s** (two runs agree). On your 16-core machine it's under 10 s. Any "
       "`webServer.timeout` below ~75 s fails every time, and a bigger number would just hide the build "
       "inside the test step. Building in a separate step also lets us cache `dist/` between jobs later.")),
    ("Ok. Split the build into its own step so the cache works, and point webServer at preview only.",
     ERR("529 overloaded_error: Overloaded")),
    ("that errored, try again",
     T(E(".github/workflows/e2e.yml", "      - run: pnpm test:e2e\n",
         "      - run: pnpm build\n      - run: pnpm test:e2e\n"),
       think="Build step before the test step; the preview server then only serves dist/."),
     T(E("playwright.config.ts", "    command: 'pnpm build && pnpm preview --port 4173',\n",
         "    // CI builds in its own step (see e2e.yml); locally run `pnpm build` first.\n"
         "    command: 'pnpm preview --port 4173 --strictPort',\n"),
       E("playwright.config.ts", "    timeout: 60_000,\n", "    timeout: 15_000,\n")),
     T(B("pnpm build && pnpm exec playwright test --project chromium",
         "✓ built in 9.91s\n\nRunning 48 tests using 8 workers\n\n  48 passed (1.9m)")),
     T(B("git diff --stat",
         " .github/workflows/e2e.yml | 1 +\n playwright.config.ts      | 5 +++--\n 2 files changed, 4 insertions(+), 2 deletions(-)")),
     A("Done:\n\n- `e2e.yml` runs `pnpm build` as its own step before `pnpm test:e2e`.\n"
       "- `playwright.config.ts` starts only `pnpm preview --strictPort` (fails fast if 4173 is taken) and "
       "the timeout is back to 15 s, which is plenty for a static server.\n\nAll 48 tests pass locally "
       "against the production build.")),
    ("Push it on a branch and watch the run.",
     T(B("git switch -c ci/e2e-prebuilt && git commit -qam 'ci: build once before e2e, serve with vite preview' "
         "&& git push -qu origin ci/e2e-prebuilt",
         "Switched to a new branch 'ci/e2e-prebuilt'\nremote: Create a pull request for 'ci/e2e-prebuilt' on GitHub by visiting:\n"
         "remote:      https://github.com/pixelforge/pixelforge/pull/new/ci/e2e-prebuilt")),
     T(B("gh run watch --exit-status $(gh run list --branch ci/e2e-prebuilt --workflow e2e.yml --limit 1 "
         "--json databaseId -q '.[0].databaseId')",
         "✓ ci/e2e-prebuilt e2e · 11875533061\nTriggered via push less than a minute ago\n\nJOBS\n"
         "✓ e2e in 4m12s (ID 33120458812)\n  ✓ Set up job\n  ✓ Run pnpm install --frozen-lockfile\n"
         "  ✓ Run pnpm build\n  ✓ Run pnpm test:e2e\n  ✓ Complete job")),
     T(B("gh pr create --fill --base main", "https://github.com/pixelforge/pixelforge/pull/418")),
     A("Green: the e2e job passed in 4m12s on `ci/e2e-prebuilt` (build step 1m14s, tests 2m31s). "
       "PR: https://github.com/pixelforge/pixelforge/pull/418. I left the retries at 2; with the server "
       "problem gone we can look at whether they are still needed.")),
]


def long_pytest_port():
    """64 rounds of porting weatherstation's tests, file by file (the round index matters here)."""
    mods = ["units", "stations", "calibration", "csv_reader", "parquet_writer", "resample", "dedupe",
            "dst", "gaps", "outliers", "humidity", "pressure", "wind", "rain_gauge", "solar", "battery",
            "firmware", "mqtt_ingest", "http_ingest", "schema", "alerts", "thresholds", "dashboard_api",
            "export_csv", "export_json", "archive", "retention", "config", "cli", "logging", "sensor_registry",
            "clock_sync", "timezone", "geo", "heat_index", "dew_point", "uv_index", "air_quality",
            "notifications", "email_digest", "backup", "migrations", "plugins", "webhooks", "metrics"]
    phrasing = ["Next: tests/test_{m}.py", "Do tests/test_{m}.py now.", "ok, tests/test_{m}.py next",
                "Port tests/test_{m}.py the same way.", "Continue with tests/test_{m}.py."]
    rounds = [("We're moving the weatherstation tests from unittest to pytest. There are 45 modules under "
               "tests/. Go one file at a time: convert the TestCase classes to plain functions, turn "
               "setUp into fixtures, replace self.assert* with bare asserts, and run that file after each "
               "port. Don't touch the code under test. Start with tests/test_units.py.",
               A("Plan: one file per step, `conftest.py` for fixtures shared by more than one file, "
                 "`pytest.approx` where the old tests used `assertAlmostEqual`. I'll stop and ask if a test "
                 "only passes because of unittest's ordering."))]
    q_and_a = {
        5: ("Why did you use `tmp_path` instead of the old `tempfile.mkdtemp()`?",
            "pytest cleans `tmp_path` up after the test and keeps the last three runs for debugging; the old "
            "`mkdtemp()` calls leaked a directory per run (there are 214 `tmp*` dirs in /tmp from them)."),
        9: ("Is the dst test still checking the fall-back hour twice?",
            "Yes: `test_fall_back_hour_is_ambiguous` is parametrised over both 02:30 readings on 2026-10-25 "
            "and asserts they map to different UTC instants."),
        14: ("How many tests do we have now vs before?", "Before: 412 unittest methods. After 14 files: "
                                                         "the ported ones hold 126 pytest tests, 19 of them parametrised cases that "
                                                         "used to be loops inside a single method."),
        21: ("Can you add `-p no:randomly` to the config? CI seems to order tests differently.",
             "Added `addopts = -p no:randomly` under `[tool.pytest.ini_options]`; the order-dependent test in "
             "test_mqtt_ingest is fixed anyway, so we can drop it later."),
        27: ("Lunch. Back in an hour.", "Sounds good. 27 of 30 files are done; next is tests/test_config.py."),
        17: ("Wait, why does test_firmware need network access?",
             "It doesn't any more: the old setUp downloaded a manifest from the update server. The pytest "
             "version uses the `firmware_manifest` fixture, which reads tests/data/manifest-2026.10.json."),
        38: ("How slow is the suite now?",
             "5.1 s for the 38 ported modules. The slowest test is test_archive_rotates_monthly (0.9 s); "
             "it writes 13 months of Parquet files and could use a smaller sample."),
        43: ("Use a smaller sample in test_archive then.",
             "Done: three months instead of thirteen, still crossing a year boundary. The test now takes 0.2 s."),
        33: ("Let's also make the fixtures in conftest typed.",
             "Done: every fixture has a return annotation and `mypy tests/` is clean."),
    }
    compact_at = {24: ("Goal: port all 45 test modules in tests/ from unittest to pytest, one file per step, "
                       "without touching the code under test. Done so far: units through dashboard_api (23 files). "
                       "Shared fixtures live in tests/conftest.py (station, readings_df, tmp_parquet). "
                       "Conventions: pytest.approx for float compares, tmp_path instead of mkdtemp, parametrize "
                       "instead of loops. -p no:randomly is set in pyproject.toml.", 3),
                  40: ("Goal: unittest -> pytest port of tests/, one file per step. 39 of 45 modules are ported "
                       "and green; fixtures are typed and live in tests/conftest.py; -p no:randomly is set. "
                       "Remaining: dew_point through metrics, then remove unittest imports, CI config, docs.", 3)}
    n = 0
    for i, m in enumerate(mods[1:] + ["conftest_cleanup"], start=1):
        if i in compact_at:
            rounds.append(("compact",) + compact_at[i])
        if i in q_and_a:
            rounds.append((q_and_a[i][0], A(q_and_a[i][1])))
        if i == 27:
            rounds.append(("gap", 1))
        if i % 8 == 0:
            rounds.append(("Run the whole suite to make sure nothing regressed.",
                           T(B("pytest -q", "%d passed in %.2fs" % (9 * i + 6, 1.1 + i * 0.12))),
                           A("Full suite green: %d passed. %d of 45 modules ported." % (9 * i + 6, i))))
        if m == "conftest_cleanup":
            break
        n += 1
        tests = 6 + (n * 7) % 11
        rounds.append((phrasing[n % len(phrasing)].format(m=m),
                       T(R("tests/test_%s.py" % m, "class %sTest(unittest.TestCase):\n    def setUp(self):\n"
                           "        self.station = make_station()\n    ...  (%d test methods)" %
                           (m.title().replace("_", ""), tests))),
                       T(W("tests/test_%s.py" % m, "import pytest\n\nfrom weatherstation import %s\n\n\n"
                           "def test_%s_defaults(station):\n    ...\n" % (m, m)),
                         B("pytest tests/test_%s.py -q" % m,
                           ("%d passed in 0.%02ds" % (tests, 11 + n)) if n % 9 != 4 else
                           "F.....\nFAILED tests/test_%s.py::test_%s_defaults - NameError: name 'station' is not defined" % (m, m))),
                       A("Ported tests/test_%s.py: %d tests, all passing." % (m, tests) if n % 9 != 4 else
                         "The first run failed because this module's fixture was still a setUp method; moved "
                         "`station` into conftest.py and now all %d tests pass." % tests)))
    rounds += [
        ("Now remove the leftover unittest imports and the old `if __name__ == '__main__': unittest.main()` blocks.",
         T(G("import unittest", "tests/", "tests/test_units.py:1:import unittest\ntests/test_cli.py:3:import unittest"),
           B("sed -i '/^import unittest$/d;/unittest.main()/d' tests/test_units.py tests/test_cli.py && pytest -q",
             "412 passed in 6.42s")),
         A("Removed the last two `import unittest` lines and the `unittest.main()` stubs. 412 passed.")),
        ("Update the CI workflow to call pytest.",
         T(E(".github/workflows/test.yml", "      - run: python -m unittest discover -s tests\n",
             "      - run: pytest -q --junitxml=reports/junit.xml\n")),
         A("CI now runs `pytest -q` and uploads JUnit XML so failures show up in the PR checks tab.")),
        ("And a short note in CONTRIBUTING.md.",
         T(E("CONTRIBUTING.md", "Run the tests with `python -m unittest`.\n",
             "Run the tests with `pytest` (fixtures live in `tests/conftest.py`).\n")),
         A("Done. That completes the port: 45 modules, 412 tests (the same count as the old unittest "
           "methods: loops became parametrised cases, 9 duplicated tests were merged), suite time 6.4 s.")),
    ]
    return rounds


INVOICE_MODEL_OLD = """    @property
    def total(self):
        return round(sum(float(line.amount) * (1 + float(line.vat_rate)) for line in self.lines.all()), 2)"""

INVOICE_MODEL_NEW = """    @property
    def total(self) -> Decimal:
        # Round each line the way the PDF shows it, then add: the total must equal the sum of
        # the printed line amounts.
        return sum((line.gross_amount for line in self.lines.all()), Decimal("0.00"))"""

LOOP_SESSIONS = [
    dict(store="loop", key="ci-e2e-timeout", cwd=PIXELFORGE, start="2026-11-26T13:02:10", model="claude",
         title=("model", "E2E job times out only on GitHub Actions"), pinned="2026-11-26T15:40:02",
         unread=False, system_prompt=True, rounds=CI_SESSION,
         features="tool-heavy (1 error result), ANSI colours in tool output, failed model call, pinned"),
    dict(store="loop", key="pytest-port", cwd=WEATHER, start="2026-11-03T08:40:00", model="gpt",
         title=("model", "Port the test suite from unittest to pytest"), unread=True, system_prompt=True,
         system_prompt_changes=[(30, {"permissions": "<permissions>\nPreset: workspace-write. Network access "
                                      "approved for this session (pip install).\n</permissions>"})],
         rounds=long_pytest_port(), features="62 rounds (round index), 2 compactions, system prompt checkpoints, unread"),
    dict(store="loop", key="invoice-cent", cwd=LEDGERLY, start="2026-11-18T10:12:00", model="claude",
         unread=False, features="fallback title, regression test",
         rounds=[
             ("Customer support says invoice INV-2026-0412 shows a total of €1,204.69 but its line items add up "
              "to €1,204.70. Can you find where the cent goes missing?",
              T(G("def total", "billing/", "billing/models.py:88:    def total(self):\n"
                                           "billing/pdf.py:41:def total_row(invoice):"),
                think="Two places compute totals: the model and the PDF. Compare them."),
              T(R("billing/models.py", INVOICE_MODEL_OLD), R("billing/pdf.py",
                  "def total_row(invoice):\n    lines = [quantize(l.amount * (1 + l.vat_rate)) for l in invoice.lines.all()]\n"
                  "    return format_eur(sum(lines))")),
              T(B("python manage.py shell -c \"from billing.models import Invoice; i = Invoice.objects.get(number='INV-2026-0412'); "
                  "print([str(l.amount * (1 + l.vat_rate)) for l in i.lines.all()], i.total)\"",
                  "['302.7450', '901.9550'] 1204.69")),
              A("The PDF and the model round differently.\n\n- `billing/pdf.py` rounds **each line** "
                "half-up to cents (302.745 → 302.75, 901.955 → 901.96) and adds them: **1204.70**.\n"
                "- `Invoice.total` converts to `float`, adds the unrounded gross amounts (1204.70000…) and "
                "rounds once, but in binary floating point 302.745 + 901.955 is 1204.6999999999998, so "
                "`round(…, 2)` gives **1204.69**.\n\nThe printed line items are what the customer sees, so "
                "the total should be the sum of the rounded lines, computed with `Decimal`.")),
             ("Fix it with Decimal and add a regression test with those exact line items.",
              T(E("billing/models.py", INVOICE_MODEL_OLD, INVOICE_MODEL_NEW),
                E("billing/models.py", "from django.db import models\n",
                  "from decimal import ROUND_HALF_UP, Decimal\n\nfrom django.db import models\n")),
              T(W("billing/tests/test_invoice_totals.py",
                  "from decimal import Decimal\n\nimport pytest\n\nfrom billing.tests.factories import InvoiceFactory\n\n\n"
                  "@pytest.mark.django_db\ndef test_total_is_sum_of_printed_lines():\n"
                  "    inv = InvoiceFactory(lines=[(Decimal(\"254.40\"), Decimal(\"0.19\")),\n"
                  "                                (Decimal(\"757.95\"), Decimal(\"0.19\"))])\n"
                  "    assert inv.total == Decimal(\"1204.70\")\n")),
              T(B("pytest billing/tests/test_invoice_totals.py -q", "1 passed in 0.41s"),
                B("pytest -q", "412 passed, 3 skipped in 38.12s")),
              A("`Invoice.total` now sums `line.gross_amount` (already quantised with ROUND_HALF_UP), so it "
                "always equals the PDF. The regression test uses the two net amounts from INV-2026-0412 and "
                "expects 1204.70. Full suite: 412 passed.")),
             ("Are any already-issued invoices affected? Don't change them, just count.",
              T(B("python manage.py shell -c \"from billing.audit import compare_totals; compare_totals(status='issued')\"",
                  "checked 18204 issued invoices\naffected: 37 (all off by exactly 0.01)\n"
                  "oldest: INV-2025-1187 (2025-09-02), newest: INV-2026-0419 (2026-11-17)")),
              A("37 of 18,204 issued invoices are affected, each by exactly one cent, all in the customer's "
                "favour. I did not change anything. Since they are issued documents, I'd issue €0.01 credit "
                "notes rather than editing them; `billing/audit.py` can export the list as CSV for "
                "accounting.")),
         ]),
    dict(store="loop", key="invoice-cent-bankers", cwd=LEDGERLY, start="2026-11-18T11:31:40", model="claude",
         fork_of="invoice-cent", fork_round=1, title=("user", "Banker's rounding experiment"), unread=True,
         features="fork (forkedFrom at a round boundary), user title, unread",
         rounds=[
             ("Different approach: keep rounding per line, but use banker's rounding (ROUND_HALF_EVEN) like the "
              "accounting export does. Which totals would change compared to what we print today?",
              T(G("ROUND_HALF_EVEN", ".", "exports/datev.py:17:    return value.quantize(CENT, rounding=ROUND_HALF_EVEN)")),
              T(B("python manage.py shell -c \"from billing.audit import compare_totals; "
                  "compare_totals(status='issued', rounding='half_even')\"",
                  "checked 18204 issued invoices\ndiffer from printed total: 1311\n  -0.01: 688\n  +0.01: 623")),
              A("With ROUND_HALF_EVEN per line, **1,311** issued invoices would get a different total than the "
                "PDF we sent (688 one cent lower, 623 one cent higher). Half-up per line (the other branch) "
                "changes none. So the export is the odd one out: I'd switch `exports/datev.py` to half-up "
                "rather than the invoices to half-even.")),
         ]),
    dict(store="loop", key="currency-backfill", cwd=LEDGERLY, start="2026-11-05T14:20:00", model="gpt",
         title=("model", "Currency backfill migration for legacy invoices"), unread=False,
         features="data migration, compaction", rounds=[
             ("We added `Invoice.currency` (nullable) last sprint. Write a data migration that backfills it for "
              "old invoices from the customer's billing currency, falling back to EUR. Prod has ~2.3M invoices, "
              "so it has to batch.",
              T(R("billing/migrations/0041_invoice_currency.py",
                  "operations = [\n    migrations.AddField('invoice', 'currency', models.CharField(max_length=3, null=True)),\n]"),
                R("customers/models.py", "class Customer(models.Model):\n    ...\n    billing_currency = models.CharField(max_length=3, blank=True)")),
              T(W("billing/migrations/0042_backfill_invoice_currency.py",
                  "from django.db import migrations\nfrom django.db.models import OuterRef, Subquery\n\nBATCH = 5000\n\n\n"
                  "def backfill(apps, schema_editor):\n    Invoice = apps.get_model('billing', 'Invoice')\n"
                  "    Customer = apps.get_model('customers', 'Customer')\n    last = 0\n    while True:\n"
                  "        ids = list(Invoice.objects.filter(pk__gt=last, currency__isnull=True)\n"
                  "                   .order_by('pk').values_list('pk', flat=True)[:BATCH])\n        if not ids:\n"
                  "            break\n        cur = Customer.objects.filter(pk=OuterRef('customer_id')).values('billing_currency')[:1]\n"
                  "        Invoice.objects.filter(pk__in=ids).update(currency=Subquery(cur))\n"
                  "        Invoice.objects.filter(pk__in=ids, currency__isnull=True).update(currency='EUR')\n"
                  "        last = ids[-1]\n\n\nclass Migration(migrations.Migration):\n    atomic = False\n"
                  "    dependencies = [('billing', '0041_invoice_currency'), ('customers', '0017_billing_currency')]\n"
                  "    operations = [migrations.RunPython(backfill, migrations.RunPython.noop)]\n")),
              T(B("python manage.py migrate billing 0042 --plan",
                  "Planned operations:\nbilling.0042_backfill_invoice_currency\n    Raw Python operation")),
              A("Migration `0042_backfill_invoice_currency`:\n\n- walks invoices by primary key in batches of "
                "5,000 (keyset pagination, so each batch is an index range scan);\n- copies the customer's "
                "`billing_currency` with a correlated subquery, then sets EUR where that was NULL;\n- "
                "`atomic = False`, so every batch commits on its own and the migration can be re-run after an "
                "interruption (it only touches rows that are still NULL);\n- reverse is a no-op.")),
             ("How long would that take on prod? Staging has last week's copy.",
              T(B("time python manage.py migrate billing 0042 --settings=ledgerly.settings.staging",
                  "Applying billing.0042_backfill_invoice_currency... OK\n\nreal\t6m41.208s\nuser\t0m12.930s\nsys\t0m1.044s")),
              A("6 min 41 s on staging for 2.31M rows (463 batches, ~0.87 s each). Each batch holds row locks "
                "on 5,000 invoices for under a second, so it is safe to run during business hours.")),
             ("Some customers have billing_currency = '' instead of NULL. Handle that too.",
              T(B("python manage.py shell -c \"from customers.models import Customer; "
                  "print(Customer.objects.filter(billing_currency='').count())\"", "1208")),
              T(E("billing/migrations/0042_backfill_invoice_currency.py",
                  "        Invoice.objects.filter(pk__in=ids, currency__isnull=True).update(currency='EUR')\n",
                  "        Invoice.objects.filter(pk__in=ids, currency__isnull=True).update(currency='EUR')\n"
                  "        Invoice.objects.filter(pk__in=ids, currency='').update(currency='EUR')\n")),
              T(B("pytest billing/tests/test_migrations.py -q", "4 passed in 2.87s")),
              A("1,208 customers have an empty string. Their invoices now get EUR as well; the migration test "
                "covers NULL, '' and a real currency.")),
             ("compact", "Goal: backfill Invoice.currency for ~2.3M legacy invoices. Done: migration 0042 "
                         "(keyset batches of 5000, atomic=False, re-runnable, '' and NULL billing currencies fall "
                         "back to EUR), tested; staging run took 6m41s. Next: NOT NULL constraint.", 2),
             ("Now make the column NOT NULL in a follow-up migration, but only after the backfill is verified.",
              T(W("billing/migrations/0043_invoice_currency_not_null.py",
                  "def check_backfilled(apps, schema_editor):\n    Invoice = apps.get_model('billing', 'Invoice')\n"
                  "    missing = Invoice.objects.filter(currency__isnull=True).count()\n    if missing:\n"
                  "        raise RuntimeError(f'{missing} invoices still have no currency; run 0042 first')\n\n\n"
                  "class Migration(migrations.Migration):\n    dependencies = [('billing', '0042_backfill_invoice_currency')]\n"
                  "    operations = [\n        migrations.RunPython(check_backfilled, migrations.RunPython.noop),\n"
                  "        migrations.AlterField('invoice', 'currency', models.CharField(max_length=3, default='EUR')),\n    ]\n")),
              T(B("python manage.py sqlmigrate billing 0043",
                  "BEGIN;\n--\n-- Raw Python operation\n--\n--\n-- Alter field currency on invoice\n--\n"
                  "ALTER TABLE \"billing_invoice\" ALTER COLUMN \"currency\" SET DEFAULT 'EUR';\n"
                  "UPDATE \"billing_invoice\" SET \"currency\" = 'EUR' WHERE \"currency\" IS NULL;\n"
                  "ALTER TABLE \"billing_invoice\" ALTER COLUMN \"currency\" SET NOT NULL;\n"
                  "ALTER TABLE \"billing_invoice\" ALTER COLUMN \"currency\" DROP DEFAULT;\nCOMMIT;")),
              A("0043 first checks that no NULLs remain and refuses to run otherwise, then sets NOT NULL. "
                "Ship 0042 and 0043 in separate releases so the check runs against prod data.")),
             ("Write the rollout notes for the PR description.",
              A("## Rollout\n\n1. **Release 1** ships `0042_backfill_invoice_currency`. It runs online in about 7 "
                "minutes (staging: 6m41s for 2.31M rows) and can be re-run safely.\n2. Verify: "
                "`Invoice.objects.filter(currency__isnull=True).count() == 0`.\n3. **Release 2** ships `0043`, "
                "which refuses to run if any NULL is left and then adds `NOT NULL`.\n\nRollback: 0042 has a "
                "no-op reverse; 0043 can be reversed (drops the constraint).")),
         ]),
    dict(store="loop", key="harbor-config", cwd=HARBOR, start="2026-11-12T09:05:00", model="claude",
         title=("user", "Layered config refactor"), pinned="2026-11-13T08:00:00", unread=False,
         runtime_context="<runtime-context>\nBranch: refactor/config-layers\nRust: 1.91.0\n</runtime-context>",
         features="user title, runtime context, pinned", rounds=[
             ("`src/config.rs` has grown into 400 lines of `if let Ok(v) = env::var(...)`. Refactor it into a "
              "`Config` struct loaded in layers: defaults, /etc/harbor/config.toml, ~/.config/harbor/config.toml, "
              "HARBOR_* env vars, then CLI flags. Keep `Config::load` working for the callers.",
              T(R("src/config.rs", "pub struct Config {\n    pub mirror_url: String,\n    pub concurrency: usize,\n"
                                   "    pub cache_dir: PathBuf,\n    ...\n}\n\nimpl Config {\n    pub fn load(cli: &Cli) -> Result<Config> {\n"
                                   "        let mut c = Config::default();\n        if let Ok(v) = env::var(\"HARBOR_MIRROR_URL\") {\n"
                                   "            c.mirror_url = v;\n        }\n        ... (31 more variables)"),
                G("Config::load", "src", "src/main.rs:24:    let config = Config::load(&cli)?;\n"
                                         "src/bin/harbor-gc.rs:12:    let config = Config::load(&cli)?;")),
              T(W("src/config/layers.rs", "/// One source of settings. Every field is optional so layers can be merged.\n"
                  "#[derive(Debug, Default, Deserialize)]\n#[serde(deny_unknown_fields)]\npub struct PartialConfig {\n"
                  "    pub mirror_url: Option<String>,\n    pub concurrency: Option<usize>,\n    pub cache_dir: Option<PathBuf>,\n}\n"),
                W("src/config/mod.rs", "mod layers;\n\npub fn load(cli: &Cli) -> Result<Config> {\n    let mut p = PartialConfig::default();\n"
                  "    for layer in [file(\"/etc/harbor/config.toml\")?, file(&user_path())?, env_layer()?, cli.layer()] {\n"
                  "        p.merge(layer);\n    }\n    p.finish()\n}\n")),
              T(B("cargo build 2>&1 | tail -6",
                  "error[E0599]: no method named `merge` found for struct `PartialConfig` in the current scope\n"
                  "  --> src/config/mod.rs:6:11\n   |\n6  |         p.merge(layer);\n   |           ^^^^^ method not found in `PartialConfig`",
                  err=True)),
              T(E("src/config/layers.rs", "}\n", "}\n\nimpl PartialConfig {\n    /// Fields set in `over` win.\n"
                  "    pub fn merge(&mut self, over: PartialConfig) {\n        self.mirror_url = over.mirror_url.or(self.mirror_url.take());\n"
                  "        self.concurrency = over.concurrency.or(self.concurrency);\n        self.cache_dir = over.cache_dir.or(self.cache_dir.take());\n    }\n}\n")),
              T(B("cargo test config 2>&1 | tail -3", "test result: ok. 14 passed; 0 failed; 0 ignored; 0 measured; 187 filtered out")),
              A("`src/config.rs` is now `src/config/{mod.rs,layers.rs}`. Each source produces a "
                "`PartialConfig` (all fields optional, unknown keys rejected), and `merge` applies them in "
                "order so later layers win. `Config::load(&cli)` keeps its signature, so `main.rs` and "
                "`harbor-gc` are unchanged. 14 config tests pass.")),
             ("What happens if the user file has a typo like `mirorr_url`?",
              T(B("printf 'mirorr_url = \"https://mirror.local\"\\n' > /tmp/typo.toml && cargo run -q -- --config /tmp/typo.toml check",
                  "Error: invalid configuration in /tmp/typo.toml\n\nCaused by:\n    unknown field `mirorr_url`, expected one of "
                  "`mirror_url`, `concurrency`, `cache_dir`, `upstreams`, `auth` at line 1 column 1")),
              A("It fails loudly, with the file and the list of valid keys. Before the refactor the typo was "
                "silently ignored and harbor used the default mirror.")),
             ("Good. Update the configuration docs.",
              T(E("docs/configuration.md", "Settings are read from environment variables.\n",
                  "Settings are merged from these sources, later ones winning:\n\n1. built-in defaults\n"
                  "2. `/etc/harbor/config.toml`\n3. `~/.config/harbor/config.toml`\n4. `HARBOR_*` environment variables\n"
                  "5. command-line flags\n\nUnknown keys in a config file are an error.\n")),
              A("Documented the five layers and the unknown-key rule in docs/configuration.md.")),
         ]),
    dict(store="loop", key="harbor-empty-manifest", cwd=HARBOR, start="2026-10-21T16:40:00", model="qwen",
         layout="v2", archived=True, unread=False, permission="read-only",
         features="legacy v2 single file, archived", rounds=[
             ("Why does `harbor sync` panic when an upstream returns an empty manifest list?",
              T(B("RUST_BACKTRACE=1 cargo run -q -- sync --only library/alpine 2>&1 | head -8",
                  "thread 'main' panicked at src/sync/manifest.rs:88:37:\nindex out of bounds: the len is 0 but the index is 0\n"
                  "stack backtrace:\n   0: rust_begin_unwind\n   ...\n   4: harbor::sync::manifest::pick_platform")),
              T(R("src/sync/manifest.rs", "fn pick_platform(list: &ManifestList, want: &Platform) -> &Descriptor {\n"
                  "    list.manifests.iter().find(|m| m.platform == *want).unwrap_or(&list.manifests[0])\n}")),
              A("`pick_platform` falls back to `list.manifests[0]` when no platform matches, and an empty list "
                "has no element 0. Registries return an empty list for tags that are being garbage-collected. "
                "Return an `Option` and skip the tag with a warning instead.")),
             ("Skip it with a warning then.",
              T(E("src/sync/manifest.rs", "-> &Descriptor {", "-> Option<&Descriptor> {"),
                B("cargo test sync::manifest -q 2>&1 | tail -1", "test result: ok. 9 passed; 0 failed")),
              A("`pick_platform` returns `None` for an empty list and `sync` logs `skipping library/alpine:3.21: "
                "upstream returned an empty manifest list`. Added a test with an empty list.")),
         ]),
    dict(store="loop", key="harbor-prune-dry-run", cwd=HARBOR, start="2026-10-28T11:15:00", model="claude",
         layout="v2", unread=False, features="legacy v2 single file", rounds=[
             ("Add a `--dry-run` flag to `harbor prune` that prints what would be deleted and the space it would free.",
              T(R("src/cmd/prune.rs", "pub fn run(args: PruneArgs, store: &Store) -> Result<()> {\n"
                  "    for blob in store.unreferenced_blobs()? {\n        store.delete_blob(&blob)?;\n    }\n    Ok(())\n}")),
              T(E("src/cmd/prune.rs", "        store.delete_blob(&blob)?;\n",
                  "        freed += blob.size;\n        if args.dry_run {\n            println!(\"would delete {} ({})\", blob.digest, human(blob.size));\n"
                  "        } else {\n            store.delete_blob(&blob)?;\n        }\n"),
                B("cargo run -q -- prune --dry-run | tail -3",
                  "would delete sha256:9f1c…e02 (28.4 MiB)\nwould delete sha256:77ab…31d (112.0 MiB)\n"
                  "dry run: 214 blobs, 6.1 GiB would be freed")),
              A("`harbor prune --dry-run` lists each unreferenced blob and a total (here 214 blobs, 6.1 GiB) "
                "without deleting anything.")),
             ("Make sure dry-run never takes the write lock.",
              T(G("lock_exclusive", "src/cmd/prune.rs", "src/cmd/prune.rs:14:    let _guard = store.lock_exclusive()?;")),
              T(E("src/cmd/prune.rs", "    let _guard = store.lock_exclusive()?;\n",
                  "    let _guard = if args.dry_run { store.lock_shared()? } else { store.lock_exclusive()? };\n")),
              A("Dry runs now take the shared lock, so they can run while a `sync` holds it for reading.")),
         ]),
    dict(store="loop", key="router-allocs", cwd=TINYHTTP, start="2026-10-24T19:20:00", model="gpt",
         title=("model", "Router allocation profiling"), archived=True, unread=False,
         features="archived v3", rounds=[
             ("BenchmarkRoute shows 3 allocs/op. Where do they come from?",
              T(B("go test -run '^$' -bench BenchmarkRoute -benchmem -memprofile mem.out && go tool pprof -top -sample_index=alloc_objects mem.out | head -8",
                  "BenchmarkRoute-16   \t 9120334\t       131.2 ns/op\t      96 B/op\t       3 allocs/op\n"
                  "      flat  flat%   sum%\n  4718630 66.67% 66.67%  tinyhttp.(*Router).match\n"
                  "  2359315 33.33%   100%  strings.Split")),
              T(R("router.go", "func (r *Router) match(path string) (*route, Params) {\n"
                  "    parts := strings.Split(strings.Trim(path, \"/\"), \"/\")\n    params := Params{}\n    ...")),
              A("Two of the three come from `match`: the `Params{}` map and the `[]string` from "
                "`strings.Split`. The third is the map's bucket array on first insert. Walking the path with "
                "`strings.IndexByte` and storing params in a fixed `[4]Param` array avoids all three for routes "
                "with up to four parameters.")),
             ("Try it.",
              T(E("router.go", "    parts := strings.Split(strings.Trim(path, \"/\"), \"/\")\n    params := Params{}\n",
                  "    var params Params // [4]Param inline, spills to a slice beyond that\n"),
                B("go test ./... && go test -run '^$' -bench BenchmarkRoute -benchmem",
                  "ok  \ttinyhttp\t0.412s\nBenchmarkRoute-16   \t21873120\t        54.9 ns/op\t       0 B/op\t       0 allocs/op")),
              A("0 allocs/op and 131 ns → 55 ns per lookup. All tests pass.")),
         ]),
    dict(store="loop", key="panic-screenshot", cwd=TINYHTTP, start="2026-11-20T17:45:00", model="claude",
         image_round=0, unread=True, features="image attachment, unread", rounds=[
             ("What does this panic in the screenshot mean? It only happens under load.",
              T(G("concurrent map writes", ".", "(no matches)"),
                G("sessions\\[", "middleware/", "middleware/session.go:31:\ts.sessions[id] = sess\n"
                                                 "middleware/session.go:44:\tdelete(s.sessions, id)"),
                think="fatal error: concurrent map writes — find the shared map."),
              T(R("middleware/session.go", "type Store struct {\n\tsessions map[string]*Session\n}")),
              A("The screenshot shows `fatal error: concurrent map writes` in `middleware.(*Store).Save`. "
                "`Store.sessions` is a plain map written from every request goroutine with no lock. Go "
                "detects this and kills the process; it only shows up under load because that's when two "
                "writes overlap. Guard the map with a `sync.RWMutex` (or use `sync.Map`).")),
             ("Add the mutex and a test that would have caught it.",
              T(E("middleware/session.go", "type Store struct {\n\tsessions map[string]*Session\n}",
                  "type Store struct {\n\tmu       sync.RWMutex\n\tsessions map[string]*Session\n}"),
                W("middleware/session_test.go", "func TestStoreConcurrentSave(t *testing.T) {\n\ts := NewStore()\n"
                  "\tvar wg sync.WaitGroup\n\tfor i := 0; i < 64; i++ {\n\t\twg.Add(1)\n\t\tgo func() { defer wg.Done(); s.Save(newID(), &Session{}) }()\n"
                  "\t}\n\twg.Wait()\n}\n")),
              T(B("go test -race ./middleware/", "ok  \ttinyhttp/middleware\t1.208s")),
              A("`Save`, `Load` and `Delete` now take the lock. The new test starts 64 goroutines saving at "
                "once; with `-race` it fails on the old code and passes now.")),
         ]),
    dict(store="loop", key="pixelforge-empty", cwd=PIXELFORGE, start="2026-11-29T09:12:30", model="gpt",
         unread=False, permission="read-only", rounds=[], features="empty (no messages)"),
    dict(store="loop", key="crop-shortcuts", cwd=PIXELFORGE, start="2026-11-24T10:30:00", model="gpt",
         layout="broken", unread=False, features="BROKEN: messages.jsonl shorter than start+bytes", rounds=[
             ("Add keyboard shortcuts to the crop tool: Enter applies, Escape cancels, and Shift locks the aspect ratio.",
              T(R("src/tools/crop/CropTool.tsx", "export function CropTool({ image, onApply, onCancel }: Props) {\n"
                  "  const [rect, setRect] = useState(initialRect(image));\n  ...")),
              T(E("src/tools/crop/CropTool.tsx", "  const [rect, setRect] = useState(initialRect(image));\n",
                  "  const [rect, setRect] = useState(initialRect(image));\n  useHotkeys({ Enter: () => onApply(rect), Escape: onCancel });\n")),
              A("Enter and Escape are wired through the existing `useHotkeys` hook. Shift already locks the "
                "ratio while dragging a corner handle; I added it to the toolbar tooltip.")),
             ("Add a Playwright test for Escape.",
              T(W("e2e/crop-shortcuts.spec.ts", "test('escape cancels crop', async ({ page }) => {\n"
                  "  await openSample(page);\n  await page.keyboard.press('c');\n  await page.keyboard.press('Escape');\n"
                  "  await expect(page.getByTestId('crop-overlay')).toBeHidden();\n});\n"),
                B("pnpm exec playwright test e2e/crop-shortcuts.spec.ts", "  1 passed (3.1s)")),
              A("Added `e2e/crop-shortcuts.spec.ts`; it passes.")),
         ]),
    dict(store="loop", key="handbook-ja", cwd=HANDBOOK, start="2026-11-09T07:30:00", model="gpt",
         title=("model", "getting-started を日本語に翻訳"), unread=False,
         features="CJK title and text, emoji", rounds=[
             ("docs/getting-started.md を日本語に翻訳して docs/ja/getting-started.md に置いてください。"
              "コードブロックとコマンドは翻訳しないで。",
              T(R("docs/getting-started.md", "# Getting started\n\nInstall the CLI:\n\n```sh\npipx install handbook-cli\n```\n\n"
                  "Create a project with `handbook new my-docs` and start the preview server with `handbook serve`.")),
              T(W("docs/ja/getting-started.md", "# はじめに\n\nCLI をインストールします：\n\n```sh\npipx install handbook-cli\n```\n\n"
                  "`handbook new my-docs` でプロジェクトを作成し、`handbook serve` でプレビューサーバーを起動します。\n")),
              A("翻訳しました ✅ `docs/ja/getting-started.md` を作成しました。コードブロックとコマンド "
                "(`pipx install handbook-cli`, `handbook new`, `handbook serve`) はそのままです。")),
             ("Thanks! Does the Japanese page show up in the nav?",
              T(G("nav:", "mkdocs.yml", "mkdocs.yml:12:nav:"), B("mkdocs build --strict 2>&1 | tail -2",
                  "INFO    -  The following pages exist in the docs directory, but are not included in the \"nav\" configuration:\n"
                  "  - ja/getting-started.md")),
              T(E("mkdocs.yml", "  - Getting started: getting-started.md\n",
                  "  - Getting started: getting-started.md\n  - 日本語:\n      - はじめに: ja/getting-started.md\n")),
              A("It wasn't; I added a 日本語 section to `nav` in mkdocs.yml and `mkdocs build --strict` is clean "
                "now. 🎉 If more pages get translated, the i18n plugin would be nicer than a nav section.")),
         ]),
    dict(store="loop", key="resample-10min", cwd=WEATHER, start="2026-11-16T13:00:00", model="qwen",
         layout="replaced", unread=True,
         features="history replacement (start > 0) + uncommitted tail, unread", rounds=[
             ("Resample the sensor readings into 10-minute buckets.",
              T(R("pipeline/resample.py", "def resample(df: pd.DataFrame) -> pd.DataFrame:\n    return df  # TODO")),
              T(E("pipeline/resample.py", "    return df  # TODO\n",
                  "    # Means for continuous values, sums for rain (it is a counter per interval).\n"
                  "    agg = {c: \"mean\" for c in df.columns if c != \"rain_mm\"} | {\"rain_mm\": \"sum\"}\n"
                  "    return df.resample(\"10min\", label=\"left\", closed=\"left\").agg(agg)\n"),
                B("pytest tests/test_resample.py -q", "5 passed in 0.38s")),
              A("`resample()` averages every column into left-labelled 10-minute buckets, except `rain_mm`, "
                "which is summed (averaging rainfall would under-report it). Tests pass.")),
             ("Empty buckets should stay NaN, not 0.",
              A("They already are: `mean` of an empty bucket is NaN. `sum` would give 0 for rain, so I set "
                "`min_count=1` for that column: an empty bucket is NaN there too.")),
         ]),
]


# ---------------------------------------------------------------- loom
