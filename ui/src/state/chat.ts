// The chat flow, mirroring `papayu chat` (crates/papayu-cli/src/cmd/chat.rs):
// goal → PLAN (saved) → "ok" → preview → confirm (selection) → apply → undo.
// The backend's `start_chat` decides the mode (Agent::handle_message); this machine only tracks
// where the conversation is and what the user may do next.
import { maybe, t } from '../i18n';
import type { ApiError } from '../transport';
import type { ApplyOutcome, ChatTurnView, ModeDecision, PlanView, PreviewView } from '../types';

export type ChatPhase =
  | 'idle' // nothing saved
  | 'thinking' // start_chat job running
  | 'planned' // a plan is saved; "ok" applies it
  | 'reviewing' // a preview is shown; apply or discard
  | 'applying' // start_apply job running
  | 'applied'; // last apply committed

export type ChatMessage =
  | { id: number; role: 'user'; text: string }
  | { id: number; role: 'plan'; decision: ModeDecision; plan: PlanView }
  | { id: number; role: 'preview'; decision: ModeDecision; preview: PreviewView }
  | { id: number; role: 'applied'; outcome: ApplyOutcome }
  | { id: number; role: 'error'; error: ApiError; during: 'chat' | 'document' | 'apply' | 'command'; checks?: CheckOutput[] }
  | { id: number; role: 'info'; text: string };

export interface CheckOutput {
  command: string;
  output: string;
  success?: boolean;
  status?: string;
}

export interface ChatState {
  phase: ChatPhase;
  savedPlan: boolean;
  preview: PreviewView | null;
  messages: ChatMessage[];
  nextId: number;
}

export type ChatEvent =
  | { type: 'send'; text: string }
  | { type: 'turn'; turn: ChatTurnView }
  | { type: 'chat_failed'; error: ApiError }
  | { type: 'preview_ready'; preview: PreviewView } // from start_preview_plan (a pasted plan document)
  | { type: 'document_failed'; error: ApiError } // start_preview_plan refused the pasted document
  | { type: 'apply_started' }
  | { type: 'applied'; outcome: ApplyOutcome }
  | { type: 'apply_failed'; error: ApiError; checks?: CheckOutput[] }
  | { type: 'discard' }
  | { type: 'info'; text: string }
  | { type: 'command_failed'; error: ApiError }
  | { type: 'reset'; savedPlan: boolean };

export function initialChat(savedPlan: boolean): ChatState {
  return { phase: savedPlan ? 'planned' : 'idle', savedPlan, preview: null, messages: [], nextId: 1 };
}

const rest = (s: ChatState) => (s.savedPlan ? 'planned' : 'idle') as ChatPhase;

type NewMessage = ChatMessage extends infer M ? (M extends ChatMessage ? Omit<M, 'id'> : never) : never;

function push(s: ChatState, m: NewMessage): Pick<ChatState, 'messages' | 'nextId'> {
  return { messages: [...s.messages, { ...m, id: s.nextId } as ChatMessage], nextId: s.nextId + 1 };
}

export function chatReducer(s: ChatState, e: ChatEvent): ChatState {
  switch (e.type) {
    case 'send':
      if (!canSend(s)) return s;
      return { ...s, ...push(s, { role: 'user', text: e.text }), phase: 'thinking' };
    case 'turn':
      if (e.turn.turn === 'plan') {
        return { ...s, ...push(s, { role: 'plan', decision: e.turn.decision, plan: e.turn.outcome }), phase: 'planned', savedPlan: true, preview: null };
      }
      return { ...s, ...push(s, { role: 'preview', decision: e.turn.decision, preview: e.turn.preview }), phase: 'reviewing', preview: e.turn.preview };
    case 'preview_ready':
      return { ...s, phase: 'reviewing', preview: e.preview };
    case 'chat_failed':
      // The failed request replaces the preview shown before it: no Apply of an older answer
      // stays under the error.
      return { ...s, ...push(s, { role: 'error', error: e.error, during: 'chat' }), phase: rest(s), preview: null };
    case 'document_failed':
      return { ...s, ...push(s, { role: 'error', error: e.error, during: 'document' }), phase: rest(s), preview: null };
    case 'apply_started':
      return s.phase === 'reviewing' ? { ...s, phase: 'applying' } : s;
    case 'applied': {
      // An applied saved plan is cleared (papayu apply); an APPLY turn never saved one.
      const wasSaved = s.preview !== null && s.savedPlan && e.outcome.applied;
      return { ...s, ...push(s, { role: 'applied', outcome: e.outcome }), phase: 'applied', preview: null, savedPlan: wasSaved ? false : s.savedPlan };
    }
    case 'apply_failed':
      // Nothing was written (rolled back): the preview stays so the user can change the selection.
      return { ...s, ...push(s, { role: 'error', error: e.error, during: 'apply', checks: e.checks }), phase: 'reviewing' };
    case 'discard':
      return s.phase === 'reviewing' ? { ...s, phase: rest(s), preview: null, ...push(s, { role: 'info', text: t('chat.discarded') }) } : s;
    case 'info':
      return { ...s, ...push(s, { role: 'info', text: e.text }) };
    case 'command_failed':
      return { ...s, ...push(s, { role: 'error', error: e.error, during: 'command' }) };
    case 'reset':
      return initialChat(e.savedPlan);
  }
}

export const canSend = (s: ChatState): boolean => s.phase !== 'thinking' && s.phase !== 'applying';

/** Whole-message triggers that apply a saved plan (papayu_agent::mode::APPLY_TRIGGERS). */
export const APPLY_TRIGGERS = ['ok', 'ок', 'okay', 'apply', 'применяй', 'применить', 'делай', 'да', 'yes', 'go', 'вперёд', 'вперед'];

export type Input =
  | { kind: 'empty' }
  | { kind: 'command'; name: 'undo' | 'redo' | 'history' | 'help' }
  | { kind: 'message'; text: string; appliesSavedPlan: boolean };

/** Local commands as in `papayu chat` (undo, redo, history, help); everything else goes to the model. */
export function classifyInput(raw: string, savedPlan: boolean): Input {
  const text = raw.trim();
  if (!text) return { kind: 'empty' };
  const lower = text.toLowerCase();
  if (lower === 'undo' || lower === 'отмена') return { kind: 'command', name: 'undo' };
  if (lower === 'redo') return { kind: 'command', name: 'redo' };
  if (lower === 'history') return { kind: 'command', name: 'history' };
  if (lower === 'help' || lower === '?') return { kind: 'command', name: 'help' };
  return { kind: 'message', text, appliesSavedPlan: savedPlan && APPLY_TRIGGERS.includes(lower) };
}

const REASON = (reason: string) => maybe(`reason.${reason}`) ?? reason;

/** "APPLY — you confirmed the saved plan" */
export function describeDecision(d: ModeDecision): string {
  return `${d.mode}${d.apply_saved_plan ? t('decision.saved') : ''} — ${REASON(d.reason)}`;
}
