// Which actions of a preview the user applies (`start_apply.selection`).
// Blocked actions (the engine says apply would fail) are never selectable; DELETE_* actions
// need an explicit confirmation (`confirmed_deletes`), as in the CLI.
import { t, tn } from '../i18n';
import type { PreviewView } from '../types';

export interface ActionRow {
  index: number;
  kind: string;
  path: string;
  blocked: { code: string; message: string } | null;
  isDelete: boolean;
  noop: boolean;
}

export interface Selection {
  rows: ActionRow[];
  selected: ReadonlySet<number>;
  deletesConfirmed: boolean;
}

export const isDeleteKind = (kind: string): boolean => kind === 'DELETE_FILE' || kind === 'DELETE_DIR';

/** One row per action, in the model's order, with the engine's error if the action is blocked. */
export function actionRows(p: PreviewView): ActionRow[] {
  const byIndex = new Map(p.preview.files.map((f) => [f.index, f]));
  return p.actions.map((a) => {
    const f = byIndex.get(a.index);
    return {
      index: a.index,
      kind: a.kind,
      path: a.path,
      blocked: f?.error ? { code: f.error.code, message: f.error.message } : null,
      isDelete: isDeleteKind(a.kind),
      noop: f?.noop ?? false,
    };
  });
}

/** Initially every action that is not blocked is selected. */
export function initialSelection(p: PreviewView): Selection {
  const rows = actionRows(p);
  return {
    rows,
    selected: new Set(rows.filter((r) => !r.blocked).map((r) => r.index)),
    deletesConfirmed: false,
  };
}

export function toggle(s: Selection, index: number): Selection {
  const row = s.rows.find((r) => r.index === index);
  if (!row || row.blocked) return s;
  const selected = new Set(s.selected);
  if (selected.has(index)) selected.delete(index);
  else selected.add(index);
  return { ...s, selected };
}

export function setAll(s: Selection, on: boolean): Selection {
  return {
    ...s,
    selected: new Set(on ? s.rows.filter((r) => !r.blocked).map((r) => r.index) : []),
  };
}

export function confirmDeletes(s: Selection, confirmed: boolean): Selection {
  return { ...s, deletesConfirmed: confirmed };
}

/** Selected DELETE_* rows (they need the confirmation). */
export function selectedDeletes(s: Selection): ActionRow[] {
  return s.rows.filter((r) => r.isDelete && s.selected.has(r.index));
}

export interface ApplyRequest {
  selection: number[];
  confirmed_deletes: boolean;
}

/** What `start_apply` gets, or why the Apply button is disabled. */
export function applyRequest(s: Selection): { ok: true; request: ApplyRequest } | { ok: false; reason: string } {
  const selection = [...s.selected].filter((i) => s.rows.some((r) => r.index === i && !r.blocked)).sort((a, b) => a - b);
  if (selection.length === 0) return { ok: false, reason: t('select.none') };
  const deletes = selectedDeletes(s);
  if (deletes.length > 0 && !s.deletesConfirmed) {
    return { ok: false, reason: tn('select.confirm', deletes.length) };
  }
  return { ok: true, request: { selection, confirmed_deletes: deletes.length > 0 && s.deletesConfirmed } };
}
