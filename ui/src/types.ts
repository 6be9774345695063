// Shapes of the backend results (docs/UI-API.md), mirroring the Rust types they serialize from:
// papayu_agent::{Progress, PlanOutcome, ApplyPreview, ApplyOutcome, ChatTurn},
// papayu_patch::{Preview, FileDiff, ApplyReport, History}, papayu_agent::report::Report.

export interface Violation {
  code: string;
  message: string;
  path?: string | null;
  action_index?: number | null;
}

export interface ApiErrorBody {
  code: string;
  message: string;
  violations?: Violation[];
}

export type Progress =
  | { stage: 'gathering_context' }
  | { stage: 'requesting'; attempt: string; protocol: number }
  | { stage: 'receiving'; chars: number }
  | { stage: 'context_round'; round: number; requests: number }
  | { stage: 'repair'; codes: string[] }
  | { stage: 'fallback'; from: number; to: number; reason: string }
  | { stage: 'previewing' }
  | { stage: 'applying'; done: number; total: number; item: string }
  | { stage: 'check_output'; command: string; output: string }
  | { stage: string; [k: string]: unknown };

export interface PlanStep {
  step: string;
  details: string;
}

export interface ContextSent {
  sent_files: string[];
  /** Blocks the diet dropped or truncated (papayu_agent::DroppedBlock). */
  dropped: { path: string | null; key: string; kind: string; reason: string }[];
  stats?: Record<string, number>;
}

export interface PlanView {
  trace_id: string;
  protocol: number;
  summary: string | null;
  plan: PlanStep[];
  questions: string[];
  risks: string[];
  verification: string[];
  commands_to_run: string[];
  rollback?: string[];
  unanswered_context_requests: unknown[];
  context_rounds: number;
  repaired: boolean;
  memory: unknown;
  trace_file: string | null;
  response: unknown;
  context?: ContextSent;
}

export interface ActionView {
  index: number;
  kind: string;
  path: string;
}

export interface ActionError {
  code: string;
  message: string;
}

export interface HunkPlacement {
  index: number;
  header: string;
  tier: string;
  old_start: number;
}

export interface FileDiff {
  index: number;
  kind: string;
  path: string;
  diff: string;
  old_bytes: number | null;
  new_bytes: number | null;
  removed_files: number;
  noop: boolean;
  hunks: HunkPlacement[];
  error: ActionError | null;
}

export interface Summary {
  create: number;
  update: number;
  patch: number;
  edit: number;
  delete: number;
  mkdir: number;
  rmdir: number;
  blocked: number;
}

export interface Preview {
  files: FileDiff[];
  summary: Summary;
}

export interface FallbackInfo {
  from: number;
  to: number;
  reason: string;
  stage: string;
}

export interface PreviewView {
  preview_id: string;
  trace_id: string;
  protocol: number;
  goal: string;
  summary: string | null;
  no_changes: boolean;
  actions: ActionView[];
  preview: Preview;
  deletes: string[];
  fallback: FallbackInfo | null;
  repaired: boolean;
  memory: unknown;
  commands_to_run: string[];
  verification: string[];
  rollback?: string[];
  trace_file: string | null;
}

export interface CheckReport {
  command: string;
  success: boolean;
  status: string;
  duration_ms: number;
  output: string;
}

export interface ApplyReport {
  tx_id: string;
  files: FileDiff[];
  summary: Summary;
  checks: CheckReport[];
}

export interface ApplyOutcome {
  trace_id: string;
  applied: boolean;
  no_changes: boolean;
  selected: number[];
  report: ApplyReport | null;
  trace_file: string | null;
}

export interface ModeDecision {
  mode: 'PLAN' | 'APPLY';
  text: string;
  apply_saved_plan: boolean;
  reason: string;
}

export type ChatTurnView =
  | { turn: 'plan'; decision: ModeDecision; outcome: PlanView }
  | { turn: 'preview'; decision: ModeDecision; preview: PreviewView };

export interface HistoryEntry {
  tx_id: string;
  kind: 'apply' | 'undo' | 'redo';
  created_unix_ms: number;
  actions: { kind: string; path: string }[];
  paths: string[];
}

export interface History {
  undo: HistoryEntry[];
  redo: HistoryEntry[];
}

export interface SavedPlan {
  goal: string;
  trace_id: string;
  protocol: number;
  summary: string | null;
  created_unix_ms: number;
  /** The prompt family it was made with. */
  llm_mode?: string;
  /** Files it was based on that changed since: a stale plan is never applied as it is. */
  changed_files?: string[];
}

export interface ProjectView {
  path: string;
  name: string;
  saved_plan: SavedPlan | null;
  history: History;
}

export interface RecentProject {
  path: string;
  name: string;
  opened_unix_ms: number;
}

export interface DirListing {
  path: string;
  parent: string | null;
  entries: { name: string; is_dir: boolean; is_project: boolean }[];
}

export type Provider = 'openai' | 'openai-compatible' | 'ollama' | 'anthropic';

export interface Settings {
  provider: Provider | null;
  api_url: string | null;
  model: string | null;
  api_key_env: string | null;
  protocol_version: 1 | 2 | 3 | null;
  strict_json: boolean | null;
  temperature: number | null;
  max_tokens: number | null;
  timeout_sec: number | null;
  theme: 'light' | 'dark' | 'system';
}

export interface AppInfo {
  version: string;
  transport: 'http' | 'tauri';
  config_dir: string;
  env: { provider: string | null; model: string | null; api_url: string | null; protocol: number | string | null };
  /** The project `papayu ui` was started for (`--project`, else the working directory's). */
  project: string | null;
  /** Online research (the Trends tab), as the environment configures it. */
  research: { on: boolean; backend: string | null; problem: string | null };
  /** The language papayu chose for people (`en`, `ru`), or null: the browser's. */
  lang?: string | null;
}

export interface TraceSummary {
  trace_id: string;
  created_unix_ms: number;
  mode: string;
  protocol: number;
  outcome: string | null;
  error_code: string | null;
  provider: string;
  model: string;
  repaired: boolean;
  fallback: boolean;
}

export interface Report {
  trace_count: number;
  unreadable_traces: number;
  since_secs: number | null;
  plan_count: number;
  apply_count: number;
  applied_count: number;
  fallback_count: number;
  fallback_rate: number | null;
  fallback_rate_excluding_non_utf8: number | null;
  fallback_reasons: Record<string, number>;
  repair_count: number;
  repair_success_count: number;
  repair_success_rate: number | null;
  error_codes: Record<string, number>;
  violation_codes: Record<string, number>;
  context_avg_chars: number | null;
  context_p95_chars: number | null;
  cache_hit_rate: number | null;
  graduation: Graduation;
}

/** One of seed 001's criteria for dropping the v1 fallback, with the value it was judged on. */
export interface Criterion {
  id: string;
  required: string;
  actual: string;
  met: boolean;
}

export interface Graduation {
  verdict: 'graduate' | 'keep_fallback' | 'not_enough_data';
  window: number;
  apply_calls: number;
  fallback_count: number;
  non_utf8_fallbacks: number;
  fallback_rate_excluding_non_utf8: number | null;
  patch_apply_failed: number;
  patch_apply_failed_repaired: number;
  patch_apply_failed_fallbacks: number;
  update_existing_forbidden_fallbacks: number;
  criteria: Criterion[];
}

export interface Proposal {
  kind: string;
  title: string;
  rationale: string;
  expected_impact?: string;
}

export interface ProposalsOutcome {
  proposals: { summary: string; proposals: Proposal[] };
  repaired: boolean;
  model: string;
}

export interface TimelineDay {
  day: string;
  calls: number;
  fallback_rate: number | null;
  repair_success_rate: number | null;
  error_codes: Record<string, number>;
}

export interface ReportView {
  report: Report;
  timeline: TimelineDay[];
  /** The model's weekly proposals, when asked for. */
  proposals?: ProposalsOutcome;
}

export interface JobStatus {
  state: 'running' | 'done' | 'failed' | 'cancelled';
  events: Progress[];
  next: number;
  result?: unknown;
  error?: ApiErrorBody;
}

/** The provider and model the model calls go to (`provider_info`, `test_connection`). */
export interface ProviderView {
  kind: string;
  model: string;
  endpoint: string;
}

export interface ProviderStatus {
  provider: ProviderView | null;
  problem: ApiErrorBody | null;
}

export interface ConnectionTest {
  ok: boolean;
  provider: ProviderView | null;
  latency_ms: number | null;
  checks: unknown[];
  error: ApiErrorBody | null;
}

/** One card of a design-trends search (`trends`). */
export interface TrendCard {
  title: string;
  /** An http(s) link on one of the curated design domains. */
  url: string;
  /** Its domain. */
  source: string;
  date: string | null;
  summary: string;
}

export interface Trends {
  topic: string;
  query: string;
  domains: string[];
  cards: TrendCard[];
}
