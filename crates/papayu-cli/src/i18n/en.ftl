# papayu's messages in English. Every message here has a twin of the same id in ru.ftl (a test
# fails otherwise). Error codes and JSON are never translated.

## Errors

error-word = error
note-word = note
# A coded error: the code, then the library's own (English) message.
coded = { $code }: { $detail }

code-ERR_JSON_PARSE = the answer is not JSON
code-ERR_SCHEMA_VALIDATION = the answer does not match the protocol's schema
code-ERR_UNKNOWN_KIND = an action has a kind this protocol version does not know
code-ERR_FIELD_NOT_ALLOWED = an action carries a field its kind does not allow
code-ERR_INVALID_PATH = a path is empty, absolute, leaves the project or uses a forbidden name
code-ERR_PATH_TOO_LONG = a path is too long (240 bytes, 255 per segment)
code-ERR_PROTECTED_PATH = a path names a secret or papayu's own state
code-ERR_FORBIDDEN_PATH = a path has a forbidden extension or lies in a build or vendor directory
code-ERR_PATH_ESCAPES_ROOT = a write would leave the project or go through a symlink
code-ERR_TOO_MANY_ACTIONS = the plan has more actions than the policy allows
code-ERR_CONTENT_TOO_LARGE = the content is over the size limit
code-ERR_CONTENT_REQUIRED = an action that writes a file has no content
code-ERR_PSEUDO_BINARY = the content looks binary
code-ERR_PLACEHOLDER_CONTENT = the content has a placeholder such as "rest unchanged" instead of code
code-ERR_PATCH_REQUIRED = a patch or edit action has no patch or edits
code-ERR_PATCH_NOT_UNIFIED = the patch is not a unified diff
code-ERR_BASE_SHA256_INVALID = base_sha256 is not a sha256 hash
code-ERR_EDIT_APPLY_FAILED = an edit could not be applied
code-ERR_RANGE_INVALID = the line range does not fit the file
code-ERR_ACTION_CONFLICT = two actions touch the same path in incompatible ways
code-ERR_APPLY_EMPTY_ACTIONS = the answer has no actions and does not say NO_CHANGES
code-ERR_PLAN_HAS_ACTIONS = a plan must not carry actions
code-ERR_UPDATE_WITHOUT_BASE = the model edits a file it was never shown
code-ERR_V2_UPDATE_EXISTING_FORBIDDEN = protocol v2 changes existing files with patches, not UPDATE_FILE
code-ERR_LOCKED = another papayu is working on this project
code-ERR_BASE_MISMATCH = the file changed since the model saw it; ask for the plan again
code-ERR_EDIT_BASE_MISMATCH = the file to edit changed since the model saw it
code-ERR_NON_UTF8_FILE = the file is not UTF-8 text
code-ERR_PATCH_APPLY_FAILED = a hunk of the patch found no place in the file
code-ERR_EDIT_AMBIGUOUS = an edit's anchor or text occurs more than once
code-ERR_EDIT_ANCHOR_NOT_FOUND = an edit's anchor is not in the file
code-ERR_EDIT_BEFORE_NOT_FOUND = an edit's "before" text is not near its anchor
code-ERR_FILE_EXISTS = the file to create already exists
code-ERR_CHECK_FAILED = a check failed after writing; everything was rolled back
code-ERR_UNDO_CONFLICT = files changed since that transaction; --force overrides
code-ERR_ROLLBACK_CONFLICT = a rollback met newer changes; they were kept and the originals saved aside
code-ERR_NOTHING_TO_UNDO = nothing to undo
code-ERR_NOTHING_TO_REDO = nothing to redo
code-ERR_IO = a file operation failed
code-ERR_LLM_TIMEOUT = the model did not answer in time
code-ERR_LLM_HTTP = the model's server answered with an error
code-ERR_LLM_NETWORK = the model's server cannot be reached
code-ERR_LLM_BAD_RESPONSE = the model's server answered in an unexpected shape
code-ERR_LLM_CONFIG = the model configuration is incomplete; see `papayu doctor`
code-ERR_MODEL_NOT_FOUND = the model file does not exist; `papayu model fetch` gets the default one
code-ERR_MODEL_INVALID = the model file is not a usable GGUF model
code-ERR_NO_SAVED_PLAN = there is no saved plan; make one with `papayu plan`
code-ERR_INVALID_CONFIG = a configuration value is invalid
code-ERR_SECRET_IN_CONFIG = keep API keys in the environment; a file names the variable
code-ERR_MEMORY_PATCH_REJECTED = the model's change to the preferences was rejected
code-ERR_CANCELLED = cancelled
code-ERR_USAGE = the command line cannot be used
code-ERR_CONFIRMATION_REQUIRED = this needs a confirmation, and machine output cannot ask: pass --yes

## Validation

plan-valid = { $file }: valid (protocol { $protocol })
plan-rejected = { $file }: rejected with { $count } problem(s) (protocol { $protocol })
plan-rejected-by-validation = { $file }: rejected by validation (protocol { $protocol }):
at-action-path = action { $index } { $path }
at-action = action { $index }
at-plan = plan
# A violation's text: the validator's own message.
violation = { $detail }

## Plans, previews, apply

plan-title = Plan (protocol v{ $protocol }, trace { $trace }):
list-risks = Risks
list-questions = Questions
list-verification = Verification
list-commands = Commands
list-rollback = Rollback
plan-unanswered = The model still wanted { $count } more context item(s) after the round limit.
memory-remembered = Remembered { $key } = { $value }
memory-not-remembered = Did not remember { $key }: { $reason }
plan-saved = Saved. Run `papayu apply` to turn it into changes (you will see a preview first).
fallback-line = protocol fallback v{ $from } → v{ $to } ({ $reason }, at { $stage })
nothing-to-change = Nothing to change.
actions-blocked = { $count } action(s) are blocked; nothing was written
confirm-apply = Apply these changes?
confirm-apply-deleting = Apply these changes, deleting { $paths }?
confirm-apply-with-deletions = Apply these changes (including deletions)?
confirm-apply-one = Apply this change?
confirm-apply-one-deleting = Apply this change, deleting { $paths }?
confirm-run-command = Run `{ $command }` in { $root }?
not-applied-saved = not applied; the plan and this preview stay saved (`papayu apply` shows it again, without asking the model while the files are unchanged)
not-applied = not applied; nothing was written
applied-tx = Applied (transaction { $tx }). `papayu undo` reverts it.
applied = Applied.
applied-plan-tx = applied: transaction { $tx } (undo with `papayu undo`)
cancelled-nothing-changed = cancelled; nothing was changed
needs-yes = this change needs a confirmation, and machine output cannot ask: pass --yes
needs-yes-apply = applying needs a confirmation, and --json cannot ask: pass --yes
preview-no-change = {" "}(no change)
preview-bytes-changed = {" "}{ $old } → { $new } bytes
preview-bytes-new = {" "}{ $new } bytes
preview-bytes-removed = {" "}-{ $old } bytes
preview-files = {" "}{ $count } file(s)
preview-hunk = {"  "}hunk { $index } { $header } → { $tier } at line { $line }
preview-blocked = BLOCKED
preview-summary = summary: create { $create } update { $update } patch { $patch } edit { $edit } delete { $delete } mkdir { $mkdir } rmdir { $rmdir } blocked { $blocked }

## Undo, redo, history

undone = undone (as transaction { $tx }; `papayu redo` re-applies)
redone = redone (as transaction { $tx })
history-stack-undo = undo stack ({ $count }):
history-stack-redo = redo stack ({ $count }):
recover-nothing = nothing to recover
recover-done = rolled back { $rolled_back } unfinished transaction(s), discarded { $discarded } incomplete journal(s)
history-entry = {"  "}{ $tx } { $kind } { $count } path(s): { $actions }

## Progress

stage-context = gathering context…
stage-requesting = asking the model ({ $attempt }, protocol v{ $protocol })…
stage-context-round = context round { $round }: { $count } request(s)…
stage-repair = answer rejected ({ $codes }); asking for a repair…
stage-retargeted = `{ $from }` lacks the edited text; the edit goes to `{ $to }`, the one file sent that has it
stage-merged-repeated = the answer repeats its action on `{ $path }` ({ $count } times): it is done once
stage-merged-rewritten = the answer deletes `{ $path }` and writes it again: read as one update of the file
stage-merged-in-turn = the answer writes `{ $path }` { $count } times: the writes are read in turn as one update
stage-widened = the answer for `{ $path }` holds only lines { $first }–{ $last }, changed: it replaces them and the other { $kept } lines stay
stage-added = the answer for `{ $path }` holds only a new definition: it is added to the file before line { $line }, and the rest of the file stays
stage-unfenced = the answer for `{ $path }` came inside a Markdown code fence; the fence is not part of the file
stage-unnumbered = the answer for `{ $path }` kept the `N|` line numbers of the file as shown; they are not part of the file
stage-restored = the answer for `{ $path }` is read with the file's own lines restored: a `\n` in a string written as a line break, or the whole text at another depth
stage-answer-as-patch = the answer for `{ $path }` is a diff of the file, not its new content: it is applied as a patch
stage-fallback = protocol fallback v{ $from } → v{ $to } ({ $reason })…
stage-previewing = computing the preview…
stage-testing-baseline = running the tests before any change: `{ $command }`…
stage-testing = change applied; running the tests: `{ $command }`…
stage-tested = tests ran in { $time }: { $failing } failing
stage-attempt = attempt { $number } of { $of }…
stage-part = the tests rejected the change; trying part of it alone: hunk(s) { $hunks } of { $of }…
stage-renamed = the tests rejected the change; trying it with the rename it began carried out everywhere: { $names } (in { $files } more file(s))…
stage-added-alone = the tests rejected the change; trying its new definitions alone: { $names } in { $files }…
stage-mutants = the model's change did not verify; trying up to { $count } small edits of papayu's own in { $names }, each tested and rolled back unless it verifies…
stage-mutated = `{ $path }` line { $line }: `{ $from }` → `{ $to }` makes the failing tests pass
stage-moved = trying the move the change began: { $names } from { $from } to { $to }…
stage-renamed-alone = trying the rename alone, without the rest of the change: { $names } (in { $files } file(s))…
stage-applying = applying { $done }/{ $total } { $item }
chars-received = · { $count } chars received
check-passed = check `{ $command }` passed
check-failed = check `{ $command }` { $status }

## Run

run-tests-given = given with --test
run-tests-memory = project memory
run-tests-detected = detected: { $reason }
run-tests-configured = configured
run-tests = tests: `{ $command }` ({ $source })
run-tests-none = tests: none known; the change cannot be verified
run-before-green = before: { $passing } passing, none failing ({ $seconds } s)
run-before-red = before: { $failing } failing ({ $names }), { $passing } passing ({ $seconds } s)
run-verified-all = verified: the tests pass
run-verified-fixed = verified: { $names } now pass
run-rolled-back = not verified, rolled back: { $reason }
run-no-change-proposed = no change proposed
run-not-applied = not applied
run-attempt = attempt { $number }{ $what }: { $result }
run-before-model = 0, before the model was asked
run-part = part: hunk(s) { $hunks } of { $of }
run-part-keeping = part: hunk(s) { $hunks } of { $of }, keeping the lines hunk(s) { $keeping } replaced
run-renamed = rename completed: { $names }, in { $files } more file(s)
run-added = the new definitions alone: { $names } in { $files }
run-mutant = papayu's own edit of `{ $path }` line { $line } (`{ $from }` → `{ $to }`), the { $tried }. tried
run-moved = moved { $names } from { $from } to { $to }, imports in { $files } more file(s)
run-renamed-alone = the rename alone: { $names }, in { $files } file(s)
run-solved = verified fix applied{ $tx }; `papayu undo` reverts it
run-unverified = applied without verification{ $tx }: { $reason }
run-tx = {" "}(transaction { $tx })
run-no-test-command = no test command
run-not-solved = not solved: { $reason }
run-unchanged = nothing verified; the project is unchanged
run-nothing-to-change = nothing to change: the tests already pass
run-declined = declined: nothing was written
run-usage = model calls: { $calls }, tokens: { $input } in / { $output } out

## Chat

chat-title = papayu chat — { $root }
chat-help =
    Describe a goal to get a plan. "ok" / "да" applies the saved plan (preview first).
    Prefix "plan:" or "apply:" to choose the mode.
    Commands: /undo, /redo, /history, /diff (the last change shown), /discard (forget the saved plan), /help, /quit.
    Ctrl-C cancels the running step, Ctrl-D leaves; ↑/↓ recall earlier lines.
chat-unknown-command = unknown command { $command }; /help lists them
chat-undone = Undone (transaction { $tx }).
chat-redone = Redone (transaction { $tx }).
chat-nothing-applied = {"  "}(nothing applied yet)
chat-no-diff = (no change shown yet)
chat-cancelled = cancelled; nothing was written
chat-say-ok = Say "ok" to apply this plan.
chat-restored = Restored the pending plan ({ $mode } mode, protocol v{ $protocol }; "ok" applies it): { $goal }
chat-restored-stale = The saved plan is stale: { $count } file(s) it was based on changed since ({ $paths }). It will not be applied: describe the goal again for a new plan, or /discard it.
chat-discarded = The saved plan is forgotten.
chat-nothing-to-discard = There is no saved plan.

## Tables

col-metric = metric
col-value = value
col-criterion = criterion
col-threshold = threshold
col-result = result
col-check = check
col-status = status
col-detail = detail
col-count = count
col-from = from
col-setting = setting (effective)
col-provider = provider
col-model = model
col-reachable = reachable
col-structured = structured output
col-latency = latency
col-problem = problem
col-day = day (UTC)
col-calls = calls
col-fallback-rate = fallback rate
col-repair-success = repair success
col-error-code = error code
col-fallback-reason = fallback reason
col-violation-code = violation code
yes = yes
no = no

## Doctor

doctor-all-usable = all providers usable
doctor-some-unusable = some providers are not usable
doctor-local-usable = local provider usable
doctor-local-unusable = local provider not usable
doctor-no-provider = No provider configured: { $problem }

## Report

report-title = papayu report for { $root }{ $window }
report-last = {" "}(last { $since })
report-no-traces = no traces yet: run papayu with PAPAYU_TRACE=1 to record them
report-traces = traces
report-plan-calls = plan calls
report-apply-calls = apply calls (applied)
report-fallbacks = protocol fallbacks
report-repairs = repairs (accepted)
report-context-mean = context size, mean
report-context-chars = { $count } chars
report-cache-hits = context cache hits
report-unreadable = unreadable traces
report-window = window
report-all-traces = all traces
report-fallback-reasons = Fallback reasons
report-fallback-stages = Fallback stages
report-top-paths = Top paths by repair-injected base hashes:
report-graduate = GRADUATE: protocol v2 can stand alone; set PAPAYU_PROTOCOL_FALLBACK_TO_V1=0
report-keep-fallback = KEEP THE FALLBACK: a criterion below fails
report-no-verdict = NO VERDICT YET: fewer APPLY calls than the window
report-graduation = Graduation over the last { $window } APPLY calls (seed 001): { $verdict }
report-criterion-ok = ok{"  "}
report-criterion-fail = FAIL
report-proposals-by = Proposals by { $model }{ $repaired }:
report-after-repair = {" "}(after one repair)
report-why = why: { $text }
report-expect = expect: { $text }
# Seed 001's graduation criteria, by their stable id (papayu-agent's `Criterion::id`).
criterion-apply_calls = a full window of 100 APPLY calls
criterion-fallback_rate_excluding_non_utf8 = fallback rate (ERR_NON_UTF8_FILE excluded) < 1%
criterion-patch_apply_failed_rate = ERR_PATCH_APPLY_FAILED in < 1% of calls
criterion-patch_apply_failed_repair_over_fallback = ERR_PATCH_APPLY_FAILED cured by repair more often than by fallback
criterion-update_existing_forbidden = no fallback on ERR_V2_UPDATE_EXISTING_FORBIDDEN

## analyze
analyze-project = project { $root }
analyze-size = { $files } files, { $bytes } bytes{ $truncated ->
    [yes] {" "}(counting stopped at the limit)
   *[no] {""}
}
analyze-languages = languages:
analyze-files-word = files
analyze-lines-word = lines
analyze-none = none
analyze-none-detected = none detected
analyze-present = present
analyze-manifests = manifests: { $list }
analyze-test-command = test command: { $command }
analyze-architecture = architecture summary: { $state }
analyze-findings = findings: { $count }
analyze-hot-spots = hot spots (papayu transactions):

## config
config-none = (none)
config-removed = removed
config-absent = (absent)
config-env-overrides = { $var } is set and overrides the files
config-source-default = default
config-source-user = user
config-source-project = project
config-source-env = env
config-source-flag = flag

## memory
memory-user-prefs = user prefs:    { $path }
memory-project-prefs = project prefs: { $path }
memory-empty = (nothing set: the model sees no memory block)
memory-model-sees = What the model sees:
memory-removed = removed
memory-was-not-set = was not set

## model
model-catalogue = catalogue (`papayu model fetch NAME`):
model-default = (default)
model-cached = [cached]
model-from = from { $source }
model-cache = model cache: { $dir }
model-cache-empty = (empty: `papayu model fetch` downloads the default model, { $name })
model-ok-verified = ok, sha256 verified
model-ok = ok
model-problem = PROBLEM: { $problem }
model-part = (part { $part } of { $parts })
model-downloading = downloading { $file }{ $of }, { $size } MB, from { $url }…
model-installed = installed { $name } at { $path } (sha256 verified)
model-already-cached = { $name } is already cached at { $path } (sha256 verified)
model-warming = preparing the local model's prompt cache (once, a few seconds)…
model-warmed = prompt cache ready ({ $written } new, { $seconds } s)
model-warm-failed = could not prepare the prompt cache ({ $error }); the first run decodes the prompt instead

## commands, trace, findings, ask, recover
commands-refused = refused: { $error }
commands-timed-out = timed out
commands-exit = exit { $code }
commands-killed = killed
commands-none = no proposed commands
trace-none = no traces (set PAPAYU_TRACE=1 to record them)
findings-none = no findings (refresh with --refresh, or import a SARIF file with --import)
ask-raw = raw answer ({ $format }):
ask-parsed = parsed:
ask-rejected = rejected:
recover-left-alone = left alone `{ $dir }`: { $reason }
recover-unfinished = the rollback of { $tx } did not finish: { $error }; run `papayu recover` again once that is fixed

## ui
ui-opening = Opening it in your browser through { $page } (only you can read that page; it is removed once the UI connects)
ui-sandboxed-browser = (a sandboxed browser, snap or flatpak, may not be allowed to read it: then paste the URL above)
ui-no-browser = no browser opened ({ $error }); open the URL above yourself
ui-project = project: { $project }
ui-stop-hint = (Ctrl-C stops the server; anyone with this URL can drive papayu as you)

## apply-patch, batch, sandbox-exec, trends
apply-patch-hunk = hunk { $index }: { $tier } at line { $line } ({ $header })
apply-patch-applied-to = applied to { $path }
apply-patch-rejected = rejected
apply-patch-nothing-written = rejected, nothing written
apply-patch-applied-tx = applied: transaction { $tx } (undo with `papayu undo`)
batch-goal = goal { $index }/{ $total }: { $goal }
batch-col-outcome = outcome
batch-col-attempts = attempts
batch-col-code = code
batch-col-goal = goal
batch-succeeded = { $ok } of { $total } goals succeeded
sandbox-unconfined = cannot confine ({ $reason }); running unconfined
trends-header = ({ $cards } cards from { $domains } domains)
# The suffix of a yes/no question (dialoguer shows its own `[y/N]` on an English terminal).
confirm-suffix = [y/N]

## doctor
doctor-set-provider = Set PAPAYU_LLM_API_URL and PAPAYU_LLM_MODEL (and PAPAYU_LLM_API_KEY for hosted APIs),
doctor-or-local = or run a local model: scripts/local-llm.sh serve 8080, then
doctor-checks-run = checks and tests run: { $how }
doctor-integrations = integrations: { $section }
doctor-local-provider = provider local (in-process llama.cpp){ $implicit ->
    [yes] , chosen because no provider is configured
   *[no] {""}
}
doctor-model-file = model file: { $path }
doctor-model-size = size: { $size } MB
doctor-ok = ok
doctor-problem-word = PROBLEM
doctor-mismatch = MISMATCH
doctor-gguf-header = GGUF header: { $state }
doctor-sha256 = sha256 (default model): { $state }
doctor-problem = problem: { $problem }
doctor-built-without-local = this papayu was built without the local provider: rebuild with `--features local`
doctor-probe = probe: { $probe }
doctor-configuration = configuration (effective, with where each value came from):
unit-mb = MB
