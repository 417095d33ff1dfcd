"""Demo conversations of the loom and agent-harness stores, in demo_content.py's neutral form
(read there how a session is written)."""

from demo_content import (  # noqa: E402
    A,
    B,
    E,
    G,
    HANDBOOK,
    HARBOR,
    INTERRUPTED,
    LEDGERLY,
    PIXELFORGE,
    R,
    T,
    TINYHTTP,
    W,
    WEATHER,
)

LOOM_GARBAGE_LINE = "<<<<<<< HEAD"

LOOM_SESSIONS = [
    dict(store="loom", key="trailing-slash", cwd=TINYHTTP, start="2026-11-10T08:50:20", model="gemma4:e4b-mlx",
         sidecar={"pinned": "2026-11-10T14:30:05", "read_at": "2026-11-10T14:12:40"},
         features="compact record, resumed later (second system record), pinned", rounds=[
             ("why do route params vanish when the request path has a trailing slash?",
              T(B("go test ./... 2>&1 | tail -5", "--- FAIL: TestRouteParams (0.00s)\n    router_test.go:41: got 404, want 200\nFAIL\n"
                                                 "FAIL\ttinyhttp\t0.009s")),
              T(R("router.go", "func (r *Router) ServeHTTP(w http.ResponseWriter, req *http.Request) {\n"
                               "\tpath := strings.TrimSuffix(req.URL.Path, \"/\")\n\tif rt, ok := r.static[path]; ok && path != \"\" {\n"
                               "\t\trt.h(w, req)\n\t\treturn\n\t}\n\trt, params := r.match(req.URL.Path)\n")),
              A("TestRouteParams requests /users/7/. ServeHTTP trims the trailing slash for the static lookup "
                "but then calls match with the untrimmed req.URL.Path, so the pattern /users/:id sees an extra "
                "empty segment and fails.")),
             ("is that the only place the raw path is used?",
              T(B("grep -n 'req.URL.Path' *.go", "router.go:58:\tpath := strings.TrimSuffix(req.URL.Path, \"/\")\n"
                                                "router.go:63:\trt, params := r.match(req.URL.Path)\n"
                                                "middleware.go:22:\tlog.Printf(\"%s %s\", req.Method, req.URL.Path)")),
              A("Yes. Line 63 is the only lookup that uses the raw path; middleware.go only logs it.")),
             ("compact", "* Goal: make TestRouteParams in router_test.go pass\n* Cause: router.go:63 calls match "
                         "with the untrimmed path, so /users/7/ has an extra empty segment\n* No files edited yet", 0),
             ("gap", 5),
             ("ok, fix it and keep a test for the trailing slash case",
              T(E("router.go", "\trt, params := r.match(req.URL.Path)\n", "\trt, params := r.match(path)\n")),
              T(E("router_test.go", "\t{\"/users/7\", 200, \"7\"},\n", "\t{\"/users/7\", 200, \"7\"},\n\t{\"/users/7/\", 200, \"7\"},\n"),
                B("go test ./...", "ok  \ttinyhttp\t0.011s")),
              A("match now gets the trimmed path. I added /users/7/ to the table in TestRouteParams; all tests pass.")),
         ]),
    dict(store="loom", key="trailing-slash-308", cwd=TINYHTTP, start="2026-11-10T15:10:30", model="gemma4:e4b-mlx",
         fork_of="trailing-slash", boot=0,
         sidecar={"read_at": "2026-11-10T15:11:00", "read_upto_user": -1, "title": "308 redirect for trailing slashes"},
         features="fork (forked_from + loom /fork layout), sidecar title, unread", rounds=[
             ("Actually, instead of matching both forms, redirect /users/7/ to /users/7 with a 308.",
              T(R("router.go", "\tpath := strings.TrimSuffix(req.URL.Path, \"/\")\n")),
              T(E("router.go", "\tpath := strings.TrimSuffix(req.URL.Path, \"/\")\n",
                  "\tpath := req.URL.Path\n\tif len(path) > 1 && strings.HasSuffix(path, \"/\") {\n"
                  "\t\tu := *req.URL\n\t\tu.Path = strings.TrimSuffix(path, \"/\")\n"
                  "\t\thttp.Redirect(w, req, u.String(), http.StatusPermanentRedirect)\n\t\treturn\n\t}\n")),
              T(B("go test ./... 2>&1 | tail -3", "--- FAIL: TestRouteParams (0.00s)\n    router_test.go:44: got 308, want 200\nFAIL")),
              T(E("router_test.go", "\t{\"/users/7/\", 200, \"7\"},\n", "\t{\"/users/7/\", 308, \"\"},\n"),
                B("go test ./...", "ok  \ttinyhttp\t0.010s")),
              A("Paths with a trailing slash now get a 308 to the same URL without it (query string kept, "
                "and 308 keeps the method, unlike 301). The /users/7/ test case expects the redirect.")),
         ]),
    dict(store="loom", key="request-id", cwd=TINYHTTP, start="2026-11-21T10:05:00", model="qwen3-coder:30b",
         sidecar={"read_at": "2026-11-21T10:07:10", "read_upto_user": -1},
         features="Go escaping of < > & and U+2028 in content, unread", rounds=[
             ("add a middleware that sets X-Request-ID when the client didn't send one, and puts it in the context",
              T(W("requestid.go", "package tinyhttp\n\ntype ctxKey struct{}\n\n// RequestID reuses a sane incoming X-Request-ID or makes one.\n"
                  "func RequestID(next http.Handler) http.Handler {\n\treturn http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {\n"
                  "\t\tid := r.Header.Get(\"X-Request-ID\")\n\t\tif id == \"\" || len(id) > 64 {\n\t\t\tid = newID()\n\t\t}\n"
                  "\t\tw.Header().Set(\"X-Request-ID\", id)\n\t\tnext.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxKey{}, id)))\n"
                  "\t})\n}\n\nfunc FromContext(ctx context.Context) (string, bool) {\n\tid, ok := ctx.Value(ctxKey{}).(string)\n"
                  "\treturn id, ok && id != \"\"\n}\n")),
              T(B("go vet ./... && go test ./...", "ok  \ttinyhttp\t0.015s")),
              A("RequestID keeps an incoming X-Request-ID if it is 1-64 bytes, otherwise generates a 16-byte hex "
                "id; it sets the response header and stores the id under a private ctxKey so handlers can call "
                "FromContext(r.Context()). The && id != \"\" guard makes FromContext report false for an empty id.")),
             ("what if the incoming header contains weird characters?",
              T(B("cat testdata/evil_request_id.txt", "abc\u2028def<script>alert(1)</script>&x=1")),
              A("Right now that value would be echoed back as-is. A line separator (U+2028) and <script> in a "
                "response header are harmless to Go's HTTP server, but they end up in our logs and in "
                "whatever dashboard renders them. I'd accept only [A-Za-z0-9._-] and generate a new id otherwise.")),
             ("do that",
              T(E("requestid.go", "\t\tif id == \"\" || len(id) > 64 {\n", "\t\tif !validID(id) {\n"),
                E("requestid_test.go", "", "func TestRequestIDRejectsControlChars(t *testing.T) {\n"
                  "\tfor _, bad := range []string{\"\", \"a b\", \"x<y>\", \"a&b\", strings.Repeat(\"z\", 65)} {\n"
                  "\t\tif validID(bad) {\n\t\t\tt.Errorf(\"validID(%q) = true\", bad)\n\t\t}\n\t}\n}\n")),
              T(B("go test -run RequestID -v ./... 2>&1 | tail -4",
                  "=== RUN   TestRequestIDRejectsControlChars\n--- PASS: TestRequestIDRejectsControlChars (0.00s)\nPASS\nok  \ttinyhttp\t0.006s")),
              A("Incoming ids must now match ^[A-Za-z0-9._-]{1,64}$; anything else, like the <script> sample, gets "
                "a fresh id. Test added.")),
         ]),
    dict(store="loom", key="aarch64-musl", cwd=HARBOR, start="2026-10-22T20:10:00", model="devstral:24b",
         sidecar={"archived": "2026-11-02T09:00:00", "read_at": "2026-10-22T21:00:00"},
         features="archived (sidecar), error tool result", rounds=[
             ("cross-compile harbor for aarch64-unknown-linux-musl, the Raspberry Pi mirror needs a static binary",
              T(B("rustup target add aarch64-unknown-linux-musl", "info: component 'rust-std' for target 'aarch64-unknown-linux-musl' is up to date")),
              T(B("cargo build --release --target aarch64-unknown-linux-musl 2>&1 | tail -4",
                  "error: linker `aarch64-linux-musl-gcc` not found\n  |\n  = note: No such file or directory (os error 2)\n\n"
                  "error: could not compile `harbor` (bin \"harbor\") due to 1 previous error", err=True)),
              T(B("cargo install cross --locked 2>&1 | tail -1 && cross build --release --target aarch64-unknown-linux-musl 2>&1 | tail -2",
                  "  Installed package `cross v0.2.5` (executable `cross`)\n    Finished `release` profile [optimized] target(s) in 2m 41s")),
              T(B("file target/aarch64-unknown-linux-musl/release/harbor && ls -lh target/aarch64-unknown-linux-musl/release/harbor",
                  "target/aarch64-unknown-linux-musl/release/harbor: ELF 64-bit LSB executable, ARM aarch64, version 1 (SYSV), statically linked, stripped\n"
                  "-rwxr-xr-x 1 demo demo 7.9M Oct 22 20:16 target/aarch64-unknown-linux-musl/release/harbor")),
              A("The plain cargo build needs a musl cross linker that isn't installed, so I used cross (it builds "
                "inside a container with the toolchain). Result: a statically linked, stripped aarch64 binary, 7.9 MB.")),
             ("add that to the release workflow",
              T(E(".github/workflows/release.yml", "        target: [x86_64-unknown-linux-musl]\n",
                  "        target: [x86_64-unknown-linux-musl, aarch64-unknown-linux-musl]\n"),
                E(".github/workflows/release.yml", "      - run: cargo build --release --target ${{ matrix.target }}\n",
                  "      - run: cargo install cross --locked && cross build --release --target ${{ matrix.target }}\n")),
              A("The release matrix now builds both musl targets with cross; each tarball is named after its target.")),
         ]),
    dict(store="loom", key="dst-duplicates", cwd=WEATHER, start="2026-10-26T07:55:00", model="qwen3-coder:30b",
         sidecar={"title": "DST duplicate rows in sensor CSV", "read_at": "2026-10-26T08:30:00"},
         features="sidecar title override, emoji", rounds=[
             ("the sensor CSV from yesterday has duplicate timestamps between 02:00 and 03:00 and the dedupe step "
              "throws half of them away 🙃 what's going on",
              T(B("grep -c '^2026-10-25 02:' data/raw/station-04/2026-10-25.csv && grep -m3 '^2026-10-25 02:3' data/raw/station-04/2026-10-25.csv",
                  "24\n2026-10-25 02:30:00,11.2,87,1009.4\n2026-10-25 02:30:00,10.9,88,1009.3\n2026-10-25 02:35:00,11.1,87,1009.4")),
              T(R("pipeline/ingest.py", "df[\"ts\"] = pd.to_datetime(df[\"ts\"])  # local wall-clock time\n"
                                        "df = df.drop_duplicates(subset=\"ts\")")),
              A("Daylight saving time ended yesterday: clocks went from 03:00 back to 02:00, so the hour 02:00-02:59 "
                "happened twice. The station logs local wall-clock time without an offset, so both passes "
                "produce identical timestamps (24 rows in that hour instead of 12), and drop_duplicates keeps "
                "only the first pass. The data isn't duplicated, the timestamps are ambiguous.")),
             ("how do we tell the two passes apart?",
              A("The rows are in write order, so within the ambiguous hour the first occurrence of each "
                "timestamp is CEST (+02:00) and the second is CET (+01:00). pandas can do exactly that: "
                "tz_localize(\"Europe/Berlin\", ambiguous=\"infer\") uses the order to resolve them. After that, "
                "convert to UTC and only then deduplicate.")),
             ("do it",
              T(E("pipeline/ingest.py", "df[\"ts\"] = pd.to_datetime(df[\"ts\"])  # local wall-clock time\n",
                  "# Stations log local wall-clock time; the repeated hour at the end of DST is resolved by\n"
                  "# row order (first pass = summer time).\n"
                  "df[\"ts\"] = pd.to_datetime(df[\"ts\"]).dt.tz_localize(\"Europe/Berlin\", ambiguous=\"infer\").dt.tz_convert(\"UTC\")\n")),
              T(B("pytest tests/test_ingest.py -q", "7 passed in 0.52s")),
              A("Ingest now localises to Europe/Berlin with ambiguous=\"infer\" and stores UTC, so all 24 rows of "
                "that hour survive dedupe. ✅ Worth asking the firmware team to log UTC instead.")),
         ]),
    dict(store="loom", key="tax-docstrings", cwd=LEDGERLY, start="2026-11-14T16:00:00", model="qwen3-coder:30b",
         features="docs", rounds=[
             ("write docstrings for the public functions in billing/tax.py, explain the reverse-charge rule properly",
              T(R("billing/tax.py", "def vat_rate(customer, product):\n    ...\n\ndef is_reverse_charge(customer, seller_country):\n    ...\n\n"
                                    "def gross(net, rate):\n    ...")),
              T(E("billing/tax.py", "def is_reverse_charge(customer, seller_country):\n",
                  "def is_reverse_charge(customer, seller_country):\n    \"\"\"Return True when the customer, not we, owes the VAT.\n\n"
                  "    Applies to B2B sales to a business in another EU member state that has a valid VAT id:\n"
                  "    the invoice shows 0 % VAT and the note \"Reverse charge\", and the customer accounts for\n"
                  "    the tax in their own country. Sales to consumers & to businesses in our own country\n"
                  "    never qualify.\n    \"\"\"\n"),
                E("billing/tax.py", "def gross(net, rate):\n",
                  "def gross(net, rate):\n    \"\"\"Net amount plus VAT, rounded half-up to whole cents (as printed on invoices).\"\"\"\n")),
              T(B("python -m pydoc billing.tax | head -5", "Help on module billing.tax in billing:\n\nNAME\n    billing.tax - VAT rules for invoices.")),
              A("Added docstrings to vat_rate, is_reverse_charge and gross. The reverse-charge one states the "
                "three conditions (B2B, different EU member state, valid VAT id) and what appears on the invoice.")),
         ]),
    dict(store="loom", key="pixelforge-idle", cwd=PIXELFORGE, start="2026-11-28T18:03:11", model="qwen3-coder:30b",
         rounds=[], features="empty (meta + system only)"),
    dict(store="loom", key="staging-migration", cwd=LEDGERLY, start="2026-11-06T09:30:00", model="devstral:24b",
         broken=True, features="BROKEN: garbage line + truncated last line after a crash", rounds=[
             ("run the 0042 migration against the staging snapshot and compare invoice counts per currency before and after",
              T(B("psql \"$STAGING_URL\" -c \"select currency, count(*) from billing_invoice group by 1 order by 2 desc\"",
                  " currency |  count\n----------+---------\n          | 2310442\n(1 row)")),
              T(B("python manage.py migrate billing 0042 --settings=ledgerly.settings.staging",
                  "Operations to perform:\n  Target specific migration: 0042_backfill_invoice_currency, from billing\n"
                  "Running migrations:\n  Applying billing.0042_backfill_invoice_currency... OK")),
              T(B("psql \"$STAGING_URL\" -c \"select currency, count(*) from billing_invoice group by 1 order by 2 desc\"",
                  " currency |  count\n----------+---------\n EUR      | 1988120\n CHF      |  201377\n GBP      |  120945\n(3 rows)"),
                B("psql \"$STAGING_URL\" -c \"select count(*) from billing_invoice where currency is null\"",
                  " count\n-------\n     0\n(1 row)"))),
         ]),
    dict(store="loom", key="undo-stack", cwd=PIXELFORGE, start="2026-11-19T21:40:00", model="gemma4:e4b-mlx",
         features="read-only Q&A", rounds=[
             ("explain how the undo stack works in src/history/, I need to add undo for layer reordering",
              T(R("src/history/stack.ts", "export class History {\n  private past: Command[] = [];\n  private future: Command[] = [];\n"
                  "  run(cmd: Command) { cmd.apply(this.doc); this.past.push(cmd); this.future = []; this.coalesce(); }\n"
                  "  undo() { const c = this.past.pop(); if (c) { c.revert(this.doc); this.future.push(c); } }\n  ...")),
              T(R("src/history/commands/MoveLayer.ts", "// (does not exist)")),
              A("It's the command pattern: every edit is a Command with apply() and revert(). run() applies it, "
                "pushes it on past and clears future; undo() pops from past and reverts; redo() does the "
                "reverse. coalesce() merges consecutive commands of the same kind within 500 ms (so a drag is "
                "one undo step).\n\nFor reordering, add a MoveLayer command that stores the layer id, fromIndex "
                "and toIndex; revert() moves it back. Make its coalesce key the layer id so one drag across "
                "several positions undoes in one step.")),
             ("why store indices and not the whole layer list?",
              A("Memory and correctness. Snapshots of the layer list would hold references to layer objects that "
                "later commands mutate, so undoing could restore a list with newer pixels in it. Indices are a "
                "few bytes, and because commands are undone strictly in reverse order, the indices are valid "
                "when revert() runs.")),
         ]),
    dict(store="loom", key="handbook-links", cwd=HANDBOOK, start="2026-11-25T11:20:00", model="qwen3-coder:30b",
         sidecar={"pinned": "2026-11-25T12:00:00", "read_at": "2026-11-25T11:40:00"},
         features="pinned (sidecar)", rounds=[
             ("mkdocs build --strict fails with broken links, fix them",
              T(B("mkdocs build --strict 2>&1 | grep WARNING",
                  "WARNING -  Doc file 'guide/deploy.md' contains a link 'configuration.md#env-vars', but the doc 'guide/configuration.md' does not contain an anchor '#env-vars'.\n"
                  "WARNING -  Doc file 'index.md' contains a link 'guide/install.md', but the target 'guide/install.md' is not found among documentation files.\n"
                  "WARNING -  Doc file 'reference/cli.md' contains a link '../faq.md', but the target 'faq.md' is not found among documentation files.")),
              T(B("grep -n '^## ' docs/guide/configuration.md && ls docs/guide docs/help",
                  "12:## Environment variables\n30:## Files\ndocs/guide:\nconfiguration.md\ndeploy.md\ninstallation.md\n\ndocs/help:\nfaq.md")),
              T(E("docs/guide/deploy.md", "(configuration.md#env-vars)", "(configuration.md#environment-variables)"),
                E("docs/index.md", "(guide/install.md)", "(guide/installation.md)"),
                E("docs/reference/cli.md", "(../faq.md)", "(../help/faq.md)")),
              T(B("mkdocs build --strict 2>&1 | tail -1", "INFO    -  Documentation built in 1.84 seconds")),
              A("Three broken links, all from renames: the anchor is #environment-variables (mkdocs slugifies the "
                "heading), install.md became installation.md, and faq.md moved under help/. Strict build passes.")),
         ]),
]


# ---------------------------------------------------------------- agent-harness


def harness_break(data):
    """A record someone hand-edited and left with a trailing comma and a cut-off end."""
    cut = data.index('"title"')
    return data[:cut] + '"title": "Nightly export timing",\n}\n'


HARNESS_SESSIONS = [
    dict(store="harness", key="name-split", cwd=LEDGERLY, start="2026-11-22T08:15:00",
         title="Customer name split migration", sidecar={"pinned": "2026-11-22T09:00:00", "read_at": "2026-11-22T09:40:00"},
         summary="Split Customer.name into first_name/last_name with a two-step migration (0018 adds and backfills, "
                 "0019 drops name after the app stops reading it). Backfill splits on the last space; 312 single-word "
                 "names go to last_name. Tests pass.",
         state={"todos": [{"id": "1", "content": "Add first_name/last_name + backfill (0018)", "status": "done", "retries": 0},
                          {"id": "2", "content": "Switch readers to the new fields", "status": "done", "retries": 0},
                          {"id": "3", "content": "Drop Customer.name (0019)", "status": "pending", "retries": 0}]},
         features="compaction (messages != transcript), pinned (sidecar), model-written summary", rounds=[
             ("Split `Customer.name` into `first_name` and `last_name`. Names are free text; do something sensible "
              "with single-word and multi-word names. This needs a data migration.",
              T(R("customers/models.py", "class Customer(models.Model):\n    name = models.CharField(max_length=200)\n    ...")),
              T(B("python manage.py shell -c \"from customers.models import Customer as C; "
                  "print(C.objects.count(), C.objects.exclude(name__contains=' ').count())\"", "48213 312")),
              A("48,213 customers; 312 have a single-word name (mostly company names). Proposal: split on the "
                "**last** space, so \"Anna Maria Schulz\" → first \"Anna Maria\", last \"Schulz\"; single words "
                "go to `last_name` with an empty `first_name`. Two migrations: 0018 adds the fields and "
                "backfills, 0019 drops `name` once nothing reads it.")),
             ("Sounds right. Write 0018.",
              T(W("customers/migrations/0018_split_name.py",
                  "def split(apps, schema_editor):\n    Customer = apps.get_model(\"customers\", \"Customer\")\n"
                  "    for c in Customer.objects.only(\"id\", \"name\").iterator(chunk_size=2000):\n"
                  "        first, _, last = c.name.strip().rpartition(\" \")\n"
                  "        Customer.objects.filter(pk=c.pk).update(first_name=first, last_name=last)\n")),
              T(B("pytest customers/tests/test_migrations.py -q", "3 passed in 1.94s")),
              A("0018 adds both fields (blank allowed) and backfills with `rpartition(\" \")`. Tests cover "
                "one, two and three words.")),
             ("compact", "Goal: split Customer.name into first_name/last_name. Decided: split on the last space, "
                         "single words go to last_name. Done: migration 0018 (fields + backfill) with tests.", 1),
             ("Now switch everything that reads `name` to the new fields.",
              T(G("\\.name\\b", "customers/ billing/ templates/",
                  "billing/pdf.py:22:    c.drawString(40, 760, invoice.customer.name)\n"
                  "customers/admin.py:9:    list_display = (\"name\", \"email\", \"country\")\n"
                  "templates/emails/invoice.txt:1:Hello {{ customer.name }},")),
              T(E("customers/models.py", "    name = models.CharField(max_length=200)\n",
                  "    name = models.CharField(max_length=200)  # removed in 0019\n\n    @property\n"
                  "    def display_name(self) -> str:\n        return f\"{self.first_name} {self.last_name}\".strip()\n"),
                E("billing/pdf.py", "invoice.customer.name", "invoice.customer.display_name"),
                E("customers/admin.py", "(\"name\", ", "(\"last_name\", \"first_name\", "),
                E("templates/emails/invoice.txt", "{{ customer.name }}", "{{ customer.display_name }}")),
              T(B("pytest -q", "418 passed, 3 skipped in 39.47s")),
              A("Three readers switched to `display_name` / the new fields; nothing else references `name`. "
                "All tests pass, so 0019 can drop the column in the next release.")),
         ]),
    dict(store="harness", key="name-split-generated", cwd=LEDGERLY, start="2026-11-22T10:05:00",
         fork_of="name-split", sidecar={"read_at": "2026-11-22T10:06:00", "read_upto_user": -1},
         features="branch (branched_from, title \"(branch)\"), unread", rounds=[
             ("In this branch, try keeping `name` as a generated column instead of dropping it, so old reports keep working.",
              T(E("customers/models.py", "    name = models.CharField(max_length=200)  # removed in 0019\n",
                  "    name = models.GeneratedField(\n        expression=Concat(\"first_name\", Value(\" \"), \"last_name\"),\n"
                  "        output_field=models.CharField(max_length=301),\n        db_persist=True,\n    )\n")),
              T(B("python manage.py makemigrations customers --name name_generated && pytest -q",
                  "Migrations for 'customers':\n  customers/migrations/0019_name_generated.py\n    - Alter field name on customer\n"
                  "418 passed, 3 skipped in 40.02s")),
              A("`name` is now a stored generated column (`first_name || ' ' || last_name`), so raw SQL reports that "
                "select `name` keep working and it can never drift. Caveat: single-word names get a leading space; "
                "wrap it in `Trim` if the reports care.")),
         ]),
    dict(store="harness", key="slow-export", cwd=WEATHER, start="2026-11-27T07:20:00",
         sidecar={"read_at": "2026-11-27T07:31:00", "read_upto_user": -1},
         summary="Nightly export went from 4 to 38 minutes because iterrows() was introduced in export_csv.py. "
                 "Replaced it with vectorised to_csv; export takes 3m10s. Also found an ANSI-coloured log line.",
         features="profiling, ANSI in tool output, unread (sidecar)", rounds=[
             ("Why is the nightly export job slow? It used to take 4 minutes, now it's close to 40.",
              T(B("git log --since=3.weeks --oneline -- pipeline/export_csv.py",
                  "c0ffee1 export: format floats per station precision\n7a1d2b9 export: add station name column")),
              T(B("py-spy record -d 60 -o /tmp/export.svg --format raw -- python -m pipeline.export --date 2026-11-26 && "
                  "head -3 /tmp/export.svg.txt",
                  "\x1b[32mpy-spy>\x1b[0m Sampling process 100 times a second. Press Control-C to exit.\n"
                  "\x1b[32mpy-spy>\x1b[0m Wrote raw flamegraph data to '/tmp/export.svg'. Samples: 6012 Errors: 0\n"
                  "export_day (pipeline/export_csv.py:41);iterrows (pandas/core/frame.py:1504) 5120")),
              T(R("pipeline/export_csv.py", "for _, row in df.iterrows():\n    out.write(\",\".join(fmt(row[c], PRECISION[station][c]) for c in cols) + \"\\n\")")),
              A("85% of the samples are in `DataFrame.iterrows` at export_csv.py:41, added three weeks ago by "
                "c0ffee1 to format each value with its station's precision. iterrows builds a Series per row: "
                "on 9.4M rows that's the 34 extra minutes. Rounding each column once with `df.round(PRECISION[station])` "
                "and a single `to_csv` does the same thing vectorised.")),
             ("Do it and time it.",
              T(E("pipeline/export_csv.py", "for _, row in df.iterrows():\n    out.write(\",\".join(fmt(row[c], PRECISION[station][c]) for c in cols) + \"\\n\")",
                  "df.round(PRECISION[station]).to_csv(out, columns=cols, header=False, index=False)")),
              T(B("pytest tests/test_export.py -q && time python -m pipeline.export --date 2026-11-26",
                  "6 passed in 0.71s\n\nreal\t3m10.442s\nuser\t2m58.107s\nsys\t0m9.880s")),
              A("3 min 10 s, faster than before the regression. The export test compares byte-for-byte against "
                "a golden file, so the output is unchanged.")),
         ]),
    dict(store="harness", key="contrib-e2e", cwd=PIXELFORGE, start="2026-11-01T15:00:00",
         title="CONTRIBUTING: local e2e", archived=True,
         summary="Added a 'Running the end-to-end tests' section to CONTRIBUTING.md.",
         features="archived (record), docs", rounds=[
             ("Write a section for CONTRIBUTING.md on running the e2e tests locally. Keep it short.",
              T(R("CONTRIBUTING.md", "# Contributing\n\n## Setup\n\n`pnpm install`\n\n## Unit tests\n\n`pnpm test`\n")),
              T(E("CONTRIBUTING.md", "## Unit tests\n\n`pnpm test`\n",
                  "## Unit tests\n\n`pnpm test`\n\n## End-to-end tests\n\n```sh\npnpm exec playwright install chromium   # once\n"
                  "pnpm build && pnpm test:e2e\n```\n\nFailed tests leave a trace in `test-results/`; open it with "
                  "`pnpm exec playwright show-trace <file>`. `pnpm test:e2e --ui` runs them interactively.\n")),
              A("Added \"End-to-end tests\": install the browser once, build, run; how to open a trace; the `--ui` mode.")),
         ]),
    dict(store="harness", key="flaky-auth", cwd=HARBOR, start="2026-11-15T13:40:00", status="aborted",
         title="Flaky registry auth integration test",
         features="status aborted, interrupted tool batch (recovery notice on replay)", rounds=[
             ("tests/integration/auth.rs::token_refresh fails about one run in ten on CI. Find out why; don't fix yet.",
              T(R("tests/integration/auth.rs", "#[tokio::test]\nasync fn token_refresh() {\n    let reg = FakeRegistry::start().await;\n"
                  "    reg.set_token_ttl(Duration::from_secs(1));\n    let c = client(&reg);\n    c.pull(\"library/alpine:3.21\").await.unwrap();\n"
                  "    tokio::time::sleep(Duration::from_millis(1100)).await;\n    c.pull(\"library/alpine:3.21\").await.unwrap();\n}")),
              T(B("for i in $(seq 20); do cargo test -q --test integration token_refresh 2>&1 | grep -c FAILED; done | sort | uniq -c",
                  "     18 0\n      2 1")),
              A("Reproduced: 2 of 20 runs fail. The test sleeps 1.1 s against a 1 s token TTL, but the client "
                "refreshes tokens 30 s *early* (clock-skew margin) only when the TTL is over 60 s; for a 1 s TTL "
                "it refreshes exactly at expiry, and the 100 ms of slack is not enough on a busy CI runner.")),
             ("Confirm by running it 50 times with the margin logged, and check the refresh code at the same time.",
              T(INTERRUPTED(B("for i in $(seq 50); do RUST_LOG=harbor::auth=debug cargo test -q --test integration token_refresh; done 2>&1 | grep -E 'refresh|FAILED' | sort | uniq -c",
                              "")),
                INTERRUPTED(R("src/auth/token.rs", "")),
                think=None, text="Running both in parallel.")),
         ]),
    dict(store="harness", key="docs-search", cwd=HANDBOOK, start="2026-11-08T10:10:00",
         sidecar={"read_at": "2026-11-08T10:30:00"},
         features="emoji in user and assistant text", rounds=[
             ("Add search to the docs site 🔍 — offline, no external service.",
              T(R("mkdocs.yml", "site_name: Handbook\ntheme:\n  name: material\nplugins: []\n")),
              T(E("mkdocs.yml", "plugins: []\n", "plugins:\n  - search:\n      lang: [en, ja]\n")),
              T(B("mkdocs build --strict 2>&1 | tail -1 && ls site/search/", "INFO    -  Documentation built in 2.06 seconds\nsearch_index.json")),
              A("Search is on 🔍: the built-in `search` plugin builds `site/search/search_index.json` at build time "
                "and runs entirely in the browser (lunr.js). I enabled English and Japanese so the 日本語 pages "
                "are tokenised too.")),
         ]),
    dict(store="harness", key="tinyhttp-idle", cwd=TINYHTTP, start="2026-11-23T12:00:00", rounds=[],
         features="empty (system prompt only)"),
    dict(store="harness", key="export-timing-broken", cwd=WEATHER, start="2026-11-11T09:00:00", broken=True,
         features="BROKEN: invalid JSON (hand-edited)", rounds=[
             ("How long does each stage of the nightly export take?",
              T(B("grep -E 'stage=.* took' logs/export-2026-11-10.log",
                  "stage=load took=41.2s\nstage=clean took=12.8s\nstage=export took=2210.5s")),
              A("load 41 s, clean 13 s, export 36 min 50 s: the export stage is almost all of it.")),
         ]),
    dict(store="harness", key="todo-scan", cwd=WEATHER, start="2026-10-19T09:20:00", memory_store_era=True,
         unwrapped=True, features="old MemoryStore-era record (no transcript/title/state)", rounds=[
             ("List the TODO comments in pipeline/",
              T(G("TODO", "pipeline/", "pipeline/ingest.py:14:# TODO: stations should log UTC\n"
                                       "pipeline/resample.py:3:    return df  # TODO\n"
                                       "pipeline/alerts.py:77:# TODO: rate-limit frost alerts")),
              A("Three: pipeline/ingest.py:14 (stations should log UTC), pipeline/resample.py:3 (resample is a "
                "stub) and pipeline/alerts.py:77 (rate-limit frost alerts).")),
         ]),
    dict(store="harness", key="registry-retry", cwd=HARBOR, start="2026-11-28T16:45:00", status="active",
         title="", features="stale status \"active\" (lock not held: interrupted)", rounds=[
             ("Add retry with exponential backoff to the registry client for 429 and 5xx responses. Respect Retry-After.",
              T(R("src/registry/client.rs", "pub async fn get(&self, url: &str) -> Result<Response> {\n"
                  "    let resp = self.http.get(url).send().await?;\n    resp.error_for_status().map_err(Into::into)\n}")),
              T(E("src/registry/client.rs", "    let resp = self.http.get(url).send().await?;\n    resp.error_for_status().map_err(Into::into)\n",
                  "    let mut delay = Duration::from_millis(250);\n    for attempt in 1..=5 {\n"
                  "        let resp = self.http.get(url).send().await?;\n        if !retryable(resp.status()) || attempt == 5 {\n"
                  "            return resp.error_for_status().map_err(Into::into);\n        }\n"
                  "        let wait = retry_after(&resp).unwrap_or(delay).min(Duration::from_secs(30));\n"
                  "        tokio::time::sleep(wait + jitter(wait)).await;\n        delay *= 2;\n    }\n    unreachable!()\n")),
              T(B("cargo test registry::client -q 2>&1 | tail -1", "test result: ok. 11 passed; 0 failed; 0 ignored")),
              A("GETs now retry up to 5 times on 429 and 5xx: 250 ms doubling, with jitter, capped at 30 s; a "
                "`Retry-After` header (seconds or HTTP date) overrides the computed delay. Tests pass.")),
             ("Add a test that Retry-After is honoured.",
              T(W("src/registry/client_tests.rs", "#[tokio::test(start_paused = true)]\nasync fn honours_retry_after() {\n"
                  "    let srv = MockServer::start().await;\n    srv.respond_once(429, [(\"Retry-After\", \"7\")]).then(200);\n"
                  "    let t0 = Instant::now();\n    client(&srv).get(&srv.url(\"/v2/\")).await.unwrap();\n"
                  "    assert!(t0.elapsed() >= Duration::from_secs(7));\n}\n"))),
         ]),
]
