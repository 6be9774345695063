// Shared test fixtures.
import type { FileDiff, PreviewView } from '../types';

export function file(index: number, kind: string, path: string, error: FileDiff['error'] = null): FileDiff {
  return { index, kind, path, diff: '', old_bytes: null, new_bytes: null, removed_files: 0, noop: false, hunks: [], error };
}

export function preview(): PreviewView {
  const actions = [
    { index: 0, kind: 'PATCH_FILE', path: 'src/lib.rs' },
    { index: 1, kind: 'CREATE_FILE', path: 'docs/NOTES.md' },
    { index: 2, kind: 'DELETE_FILE', path: 'old.txt' },
    { index: 3, kind: 'PATCH_FILE', path: 'src/b.rs' },
  ];
  return {
    preview_id: 'p1', trace_id: 't', protocol: 2, goal: 'g', summary: 's', no_changes: false, actions,
    preview: {
      // apply order differs from the model's order
      files: [file(1, 'CREATE_FILE', 'docs/NOTES.md'), file(0, 'PATCH_FILE', 'src/lib.rs'), file(3, 'PATCH_FILE', 'src/b.rs', { code: 'ERR_BASE_MISMATCH', message: 'changed since' }), file(2, 'DELETE_FILE', 'old.txt')],
      summary: { create: 1, update: 0, patch: 2, edit: 0, delete: 1, mkdir: 0, rmdir: 0, blocked: 1 },
    },
    deletes: ['old.txt'], fallback: null, repaired: false, memory: null, commands_to_run: [], verification: [], trace_file: null,
  };
}

