"""Demo conversations for the agents spool only reads (Claude Code, pi), in the same neutral
form as demo_content.py. Rendered by demo_agents.py. Extra keys: fork_of (a session of the
same store, listed earlier), subagent (prompt, answer: Claude), branch (prompt, reply,
summary: an abandoned branch in a pi tree), name / label (pi), title (Claude /rename),
archived (Codex),
broken (a damaged file: a garbage line and a torn last line).
"""

from demo_content import A, B, E, G, R, T, HARBOR, HANDBOOK, LEDGERLY, PIXELFORGE, TINYHTTP, WEATHER

CLAUDE_SESSIONS = [
    dict(store="claude", key="claude-etag", cwd=TINYHTTP, start="2026-11-27T09:12:00", model="claude",
         features="tool calls, custom title",
         title="ETag support for static files",
         rounds=[
             ("serve static files with an ETag header and answer If-None-Match with 304",
              T(G("ServeFile", ".", "static.go:18: func ServeFile(w ResponseWriter, r *Request, name string)"),
                R("static.go", "package tinyhttp\n\nfunc ServeFile(w ResponseWriter, r *Request, name string) {\n"
                  "\tf, err := os.Open(name)\n\t...\n}"),
                think="Hash size and mtime, not the content: cheap and stable."),
              T(E("static.go", "\tf, err := os.Open(name)",
                  "\tf, err := os.Open(name)\n\tif etagMatches(r, f) {\n\t\tw.WriteHeader(304)\n\t\treturn\n\t}")),
              A("ServeFile now sends `ETag: W/\"<size>-<mtime>\"` and answers a matching If-None-Match "
                "with 304 Not Modified.")),
             ("add a test for the 304 path",
              T(B("go test -run TestETag ./...", "ok  \ttinyhttp\t0.011s")),
              A("TestETag covers the first 200, the 304 on a repeat request, and a 200 after the file changes.")),
         ]),
    dict(store="claude", key="claude-etag-fork", cwd=TINYHTTP, start="2026-11-27T10:02:00", model="claude",
         features="fork (forkedFrom on copied records)", fork_of="claude-etag",
         rounds=[
             ("try strong ETags from a content hash instead",
              T(B("go test ./...", "ok  \ttinyhttp\t0.019s")),
              A("Strong ETags now hash the content with xxhash; large files pay one read on the first request.")),
         ]),
    dict(store="claude", key="claude-sensor-gaps", cwd=WEATHER, start="2026-11-20T07:45:00", model="claude",
         features="compaction (compact boundary + summary)",
         rounds=[
             ("the sensor export has gaps after midnight UTC, find out why",
              T(B("grep -c '' exports/2026-11-19.csv", "1382")),
              A("1382 rows instead of 1440: 58 minutes are missing between 00:00 and 00:58 UTC.")),
             ("check the rotation job",
              T(R("pipeline/rotate.py", "def rotate(now):\n    if now.hour == 0:\n        flush(); reopen()"),
                think="The writer reopens the file before the buffer is flushed?"),
              A("rotate() reopens the file at 00:00 before the buffered rows are flushed, so they are lost.")),
             ("compact", "Export gaps after midnight: rotate() reopened the CSV before flushing the buffer; "
              "58 rows lost per night.", 1),
             ("fix it and backfill last week",
              T(E("pipeline/rotate.py", "flush(); reopen()", "flush(sync=True); reopen()"),
                B("python -m pipeline.backfill --days 7", "backfilled 406 rows")),
              A("rotate() now flushes synchronously before reopening; the backfill restored 406 rows.")),
         ]),
    dict(store="claude", key="claude-harbor-audit", cwd=HARBOR, start="2026-11-24T15:30:00", model="claude",
         features="subagent (Explore) under its parent",
         subagent=("List every place harbor shells out to git and whether it checks the exit code.",
                   "Three call sites: sync.rs:88 (checked), prune.rs:40 (unchecked), tag.rs:12 (checked)."),
         rounds=[
             ("audit where harbor shells out to git",
              A("I'll have a subagent survey the call sites, then fix the unchecked ones.")),
         ]),
    dict(store="claude", key="claude-ledger-rounding", cwd=LEDGERLY, start="2026-11-25T11:05:00", model="claude",
         features="BROKEN: garbage line + torn last record (crash mid-write)", broken=True,
         rounds=[
             ("why do monthly totals differ by one cent from the sum of the invoices?",
              T(G("round(", "billing/", "billing/totals.py:31:    return round(sum(lines), 2)")),
              A("Totals round the sum once, invoices round each line: half-cent lines add up differently.")),
             ("make totals sum the rounded lines",
              T(E("billing/totals.py", "return round(sum(lines), 2)", "return sum(round(l, 2) for l in lines)")),
              A("Totals now sum the rounded invoice lines.")),
         ]),
]

PI_SESSIONS = [
    dict(store="pi", key="pi-gzip", cwd=TINYHTTP, start="2026-11-28T08:20:00", model="claude",
         features="named (session_info), label", name="gzip middleware", label="design decision",
         rounds=[
             ("add gzip compression middleware, leave images and archives alone",
              T(R("middleware.go", "package tinyhttp\n\ntype Middleware func(Handler) Handler"),
                think="Wrap the ResponseWriter; decide on the first Write."),
              T(E("middleware.go", "type Middleware func(Handler) Handler",
                  "type Middleware func(Handler) Handler\n\nfunc Gzip(next Handler) Handler { ... }")),
              A("Gzip() compresses text/*, JSON and JS when the client accepts gzip; images and archives pass through.")),
             ("benchmark it",
              T(B("go test -bench Gzip -benchmem", "BenchmarkGzip-8  41220  28911 ns/op  1204 B/op  9 allocs/op")),
              A("28.9 µs per 16 KB response, 9 allocations; a sync.Pool for writers would cut most of them.")),
         ]),
    dict(store="pi", key="pi-gzip-fork", cwd=TINYHTTP, start="2026-11-28T09:40:00", model="claude",
         features="fork (parentSession, copied entries)", fork_of="pi-gzip", fork_at=7,
         rounds=[
             ("pool the gzip writers",
              T(B("go test -bench Gzip -benchmem", "BenchmarkGzip-8  98310  12140 ns/op  96 B/op  2 allocs/op")),
              A("With a sync.Pool of gzip.Writers: 12.1 µs and 2 allocations per response.")),
         ]),
    dict(store="pi", key="pi-docs-search", cwd=HANDBOOK, start="2026-11-22T13:10:00", model="gpt",
         features="branched tree (/tree with a branch summary)", thinking="high",
         branch=("render the search index at build time with a plugin instead",
                 "A build-time plugin would need a custom theme hook; dropped.",
                 "Tried a build-time search plugin; it needs a theme hook the docs theme lacks, so dropped it."),
         rounds=[
             ("the docs search box returns nothing for words with umlauts",
              T(R("docs/js/search.js", "const terms = q.toLowerCase().split(/\\W+/)"),
                think="\\W splits on ü: the regex is ASCII-only."),
              A("The tokenizer splits on `\\W`, which treats ü as a separator, so 'Größe' becomes 'gr' and 'e'.")),
             ("fix the tokenizer",
              T(E("docs/js/search.js", "split(/\\W+/)", "split(/[^\\p{L}\\p{N}]+/u)")),
              A("Terms now split on anything that is not a letter or digit in any script.")),
         ]),
    dict(store="pi", key="pi-crop-undo", cwd=PIXELFORGE, start="2026-11-19T16:00:00", model="claude",
         features="compaction (firstKeptEntryId)",
         rounds=[
             ("undo after crop restores the wrong layer",
              T(G("push_undo", "src/", "src/tools/crop.rs:52:    history.push_undo(layer_id)")),
              A("crop pushes the active layer id, but crop changes every layer; undo restores only one.")),
             ("how does the undo stack store a whole-canvas change?",
              T(R("src/history/mod.rs", "pub enum Change { Layer(Id, Snapshot), Canvas(Vec<Snapshot>) }")),
              A("Change::Canvas holds a snapshot per layer; crop should push that.")),
             ("compact", "Crop pushed a single-layer undo; Change::Canvas exists for whole-canvas edits.", 1),
             ("switch crop to Change::Canvas",
              T(E("src/tools/crop.rs", "history.push_undo(layer_id)", "history.push(Change::canvas(&doc))"),
                B("cargo test crop", "test tools::crop::undo_restores_all_layers ... ok")),
              A("Crop now records the whole canvas, and undo restores every layer.")),
         ]),
    dict(store="pi", key="pi-harbor-mirror", cwd=HARBOR, start="2026-11-23T10:30:00", model="claude",
         features="BROKEN: garbage line + torn last entry", broken=True,
         rounds=[
             ("mirror pulls time out behind the office proxy",
              T(B("harbor mirror pull alpine:3.20", "error: timed out after 30s (proxy CONNECT)", err=True)),
              A("harbor ignores HTTPS_PROXY for registry pulls; reqwest needs the proxy set on the client.")),
             ("read the proxy from the environment",
              T(E("src/client.rs", "Client::builder()", "Client::builder().proxy(Proxy::https(env_proxy()?)?)")),
              A("The registry client now uses HTTPS_PROXY and NO_PROXY.")),
         ]),
]

# Codex CLI rollouts, rendered by demo_agents.render_codex. Extra keys: name (a thread name in
# session_index.jsonl), subagent (nickname, prompt, answer: a spawned child thread),
# archived (the rollout sits in archived_sessions/).
CODEX_SESSIONS = [
    dict(store="codex", key="codex-cors", cwd=TINYHTTP, start="2026-11-29T08:05:00", model="gpt",
         features="shell + apply_patch, thread name (session_index.jsonl)", name="CORS preflight",
         rounds=[
             ("preflight requests from the dashboard get a 405, why?",
              T(G("OPTIONS", ".", "router.go:64:\tif r.Method == \"OPTIONS\" && !rt.cors {"),
                think="OPTIONS only answered when CORS is on; the dashboard app never enables it."),
              A("The router answers OPTIONS only when `rt.cors` is set, and the dashboard's router never "
                "enables it, so the preflight falls through to 405 Method Not Allowed.")),
             ("add a CORS middleware that answers preflights",
              T(E("cors.go", "package tinyhttp", "package tinyhttp\n\nfunc CORS(origins ...string) Middleware { ... }"),
                B("go test -run TestCORS ./...", "ok  \ttinyhttp\t0.014s")),
              A("CORS(origins...) answers OPTIONS with 204 and the Allow-* headers, and adds "
                "Access-Control-Allow-Origin to matching requests.")),
         ]),
    dict(store="codex", key="codex-cors-fork", cwd=TINYHTTP, start="2026-11-29T09:12:00", model="gpt",
         features="fork (forked_from_id, copied parent prefix)", fork_of="codex-cors",
         rounds=[
             ("allow credentials too, but never with a wildcard origin",
              T(E("cors.go", "func CORS(origins ...string) Middleware { ... }",
                  "func CORS(origins []string, credentials bool) Middleware { ... }"),
                B("go test -run TestCORS ./...", "ok  \ttinyhttp\t0.016s")),
              A("CORS now takes a credentials flag; with credentials it echoes the request origin and "
                "refuses to start with \"*\" in the list.")),
         ]),
    dict(store="codex", key="codex-forecast-cache", cwd=WEATHER, start="2026-11-26T14:20:00", model="gpt",
         features="compaction (compacted + replacement_history)",
         rounds=[
             ("the forecast endpoint takes 2 s on every request, profile it",
              T(B("python -m cProfile -s cumtime api/forecast.py | head -5",
                  "  1.912  api/forecast.py:40(load_grid)\n  0.031  api/forecast.py:77(interpolate)")),
              A("load_grid() reads the 40 MB model grid from disk on every request: 1.9 of the 2 s.")),
             ("cache the grid in memory",
              T(E("api/forecast.py", "grid = load_grid(path)", "grid = cached_grid(path)")),
              A("cached_grid() keeps the grid keyed by file mtime; a second request takes 35 ms.")),
             ("compact", "Forecast latency: load_grid() re-read the 40 MB grid per request; cached_grid() "
              "now memoises it by mtime (2 s -> 35 ms).", 1),
             ("invalidate the cache when the nightly model run lands",
              T(B("pytest tests/test_forecast.py -q", "6 passed in 0.41s")),
              A("The cache reloads when the grid file's mtime changes, which the nightly run bumps; "
                "a test swaps the file and checks the new values are served.")),
         ]),
    dict(store="codex", key="codex-harbor-gc", cwd=HARBOR, start="2026-11-27T16:40:00", model="gpt",
         features="subagent (spawn_agent, a child thread under its parent)",
         subagent=("Locke", "List the blobs harbor gc deletes that a manifest list still references.",
                   "Two: multi-arch manifests list child manifests by digest, and gc only walks tags, "
                   "so arm64 layers of alpine:3.20 and debian:12 are collected."),
         rounds=[
             ("harbor gc deleted layers that multi-arch images still use",
              A("I'll have a subagent trace which blobs gc considers unreferenced, then fix the walk.")),
         ]),
    dict(store="codex", key="codex-docs-links", cwd=HANDBOOK, start="2026-11-21T10:00:00", model="gpt",
         features="archived (archived_sessions/)", archived=True,
         rounds=[
             ("find broken internal links in the handbook",
              T(B("lychee --offline docs/", "3 errors: onboarding.md -> ../setup.md, faq.md -> #vpn, "
                  "tools.md -> git.md#hooks")),
              A("Three broken links: a moved setup page, a removed #vpn anchor and a renamed hooks section.")),
             ("fix them",
              T(E("docs/onboarding.md", "../setup.md", "getting-started/setup.md")),
              A("All three point at the current pages; lychee --offline now reports 0 errors.")),
         ]),
    dict(store="codex", key="codex-ledger-import", cwd=LEDGERLY, start="2026-11-28T11:30:00", model="gpt",
         features="BROKEN: garbage line + torn last record", broken=True,
         rounds=[
             ("the bank CSV import puts amounts over 1,000 in the wrong column",
              T(R("importers/bank_csv.py", "rows = line.split(\",\")"),
                think="Thousands separators are commas too."),
              A("The importer splits on every comma, so \"1,250.00\" becomes two fields.")),
             ("use the csv module",
              T(E("importers/bank_csv.py", "rows = line.split(\",\")", "rows = next(csv.reader([line]))")),
              A("The importer now parses with csv.reader, which honours the quotes around amounts.")),
         ]),
]

AGENT_SESSIONS = CLAUDE_SESSIONS + PI_SESSIONS + CODEX_SESSIONS
