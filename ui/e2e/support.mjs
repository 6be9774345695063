// e2e support: a scripted OpenAI-compatible model on 127.0.0.1, temp projects copied from
// fixtures/, the real `papayu ui` server, and Debian's Chromium driven by playwright-core.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
export const UI_DIR = resolve(here, '..');
export const RESULTS = join(UI_DIR, 'test-results');
mkdirSync(RESULTS, { recursive: true });

export const sha256 = (s) => createHash('sha256').update(s).digest('hex');

/** The body of a chat completion whose message is `text` (crates/papayu-cli/tests/agent_e2e/support.rs). */
function completion(text) {
  return {
    id: 'chatcmpl-e2e', object: 'chat.completion', model: 'scripted',
    choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  };
}

/**
 * A model on 127.0.0.1 that answers POST /v1/chat/completions with the scripted texts in order
 * (a JSON document, or server-sent events when the request asks for a stream). More requests
 * than scripted get a 400, which papayu does not retry: a test that asks too much fails visibly.
 */
export async function startModel() {
  let answers = [];
  let delayMs = 0;
  const requests = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', async () => {
      if (req.method !== 'POST' || !req.url.endsWith('/chat/completions')) {
        res.writeHead(404).end('not found');
        return;
      }
      let json = {};
      try {
        json = JSON.parse(body);
      } catch {
        /* keep {} */
      }
      requests.push(json);
      const next = answers.shift();
      if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
      if (next === undefined) {
        res.writeHead(400, { 'content-type': 'text/plain' }).end('the script has no more answers');
        return;
      }
      const text = typeof next === 'string' ? next : JSON.stringify(next);
      if (json.stream === true) {
        const mid = Math.floor(text.length / 2);
        let sse = '';
        for (const part of [text.slice(0, mid), text.slice(mid)]) {
          sse += `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: part }, finish_reason: null }] })}\n\n`;
        }
        sse += `data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: { prompt_tokens: 10, completion_tokens: 5 } })}\n\ndata: [DONE]\n\n`;
        res.writeHead(200, { 'content-type': 'text/event-stream' }).end(sse);
      } else {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(completion(text)));
      }
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    /** Replace the answers still to come. */
    script(list, opts = {}) {
      answers = [...list];
      delayMs = opts.delayMs ?? 0;
      requests.length = 0;
    },
    remaining: () => answers.length,
    close: () => new Promise((r) => server.close(r)),
  };
}

/** A temp dir with a copy of fixtures/<name> as `project/`, and `config/`, `home/` beside it. */
const temps = [];

/** Remove the temp dirs (unless PAPAYU_UI_E2E_KEEP is set, to look at them). */
export function cleanTemps() {
  if (process.env.PAPAYU_UI_E2E_KEEP) return;
  for (const t of temps.splice(0)) rmSync(t, { recursive: true, force: true });
}

export function tempProject(name) {
  const base = mkdtempSync(join(tmpdir(), `papayu-ui-e2e-${name}-`));
  temps.push(base);
  const root = join(base, 'project');
  cpSync(join(here, 'fixtures', name), root, { recursive: true });
  return { base, root };
}

/** Every file and directory under `root` (but .papa-yu/) → bytes (dirs: null). */
export function tree(root) {
  const out = {};
  const walk = (dir) => {
    for (const n of readdirSync(dir).sort()) {
      const p = join(dir, n);
      const rel = relative(root, p);
      if (rel === '.papa-yu') continue;
      if (statSync(p).isDirectory()) {
        out[`${rel}/`] = null;
        walk(p);
      } else {
        out[rel] = readFileSync(p).toString('base64');
      }
    }
  };
  walk(root);
  return out;
}

export const PAPAYU_BIN = resolve(UI_DIR, process.env.PAPAYU_BIN ?? '../target/debug/papayu');

/**
 * A fake browser opener (`xdg-open`, and `open` as macOS names it) in `<base>/bin`: it writes
 * its arguments, one a line, to `<base>/opener-argv`. Returns the bin directory.
 */
function fakeOpener(base) {
  const bin = join(base, 'bin');
  mkdirSync(bin, { recursive: true });
  const argv = join(base, 'opener-argv');
  const script = `#!/bin/sh\nprintf '%s\\n' "$@" > '${argv}.tmp' && mv '${argv}.tmp' '${argv}'\n`;
  for (const name of ['xdg-open', 'open']) writeFileSync(join(bin, name), script, { mode: 0o755 });
  return bin;
}

/**
 * Start `papayu ui --port 0 --no-open` with a hermetic environment (no PAPAYU_* of the user's)
 * against `model`; resolves with the printed URL (with #token=) once it is listening. With
 * `{ open: true }`, without `--no-open`: the browser opener is a fake that records its
 * arguments (`openerArgv()`), and the runtime directory is `<base>/run`. `{ project }` passes
 * `--project`; `{ cwd }` is the working directory (default `base`).
 */
export async function startServer(model, base, extraEnv = {}, opts = {}) {
  if (!existsSync(PAPAYU_BIN)) throw new Error(`papayu binary not found at ${PAPAYU_BIN}: build it (cargo build -p papayu-cli) or set PAPAYU_BIN`);
  const env = {
    PATH: opts.open ? `${fakeOpener(base)}:${process.env.PATH}` : process.env.PATH,
    HOME: join(base, 'home'),
    XDG_CONFIG_HOME: join(base, 'config'),
    PAPAYU_LLM_API_URL: model.url,
    PAPAYU_LLM_MODEL: 'scripted',
    PAPAYU_LLM_TIMEOUT_SEC: '20',
    PAPAYU_TRACE: '1',
    ...(opts.open ? { XDG_RUNTIME_DIR: join(base, 'run') } : {}),
    ...extraEnv,
  };
  // `null` in extraEnv removes a variable (e.g. to let the user's config file decide).
  for (const [k, v] of Object.entries(env)) if (v === null) delete env[k];
  mkdirSync(env.HOME, { recursive: true });
  mkdirSync(env.XDG_CONFIG_HOME, { recursive: true });
  if (opts.open) mkdirSync(env.XDG_RUNTIME_DIR, { recursive: true, mode: 0o700 });
  const args = ['ui', '--port', '0', ...(opts.open ? [] : ['--no-open']), ...(opts.project ? ['--project', opts.project] : [])];
  const child = spawn(PAPAYU_BIN, args, { env, cwd: opts.cwd ?? base, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  const url = await new Promise((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`papayu ui printed no URL in 20 s.\nstdout: ${out}\nstderr: ${err}`)), 20_000);
    child.stdout.on('data', (d) => {
      out += d;
      const m = /http:\/\/127\.0\.0\.1:\d+\/#token=[0-9a-fA-F]+/.exec(out);
      if (m) {
        clearTimeout(timer);
        res(m[0]);
      }
    });
    child.on('exit', (code) => rej(new Error(`papayu ui exited with ${code}.\nstdout: ${out}\nstderr: ${err}`)));
  });
  return {
    url,
    origin: new URL(url).origin,
    token: url.split('#token=')[1],
    logs: () => ({ stdout: out, stderr: err }),
    /** The arguments the fake opener was started with (waits up to 20 s for it). */
    openerArgv: () => waitFor(() => {
      const file = join(base, 'opener-argv');
      return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter((l) => l) : null;
    }, 'papayu ui never started the browser opener'),
    stop: () =>
      new Promise((r) => {
        if (child.exitCode !== null) return r();
        child.once('exit', r);
        child.kill('SIGTERM');
      }),
  };
}

/** Poll `f` until it returns a truthy value (which is returned); fail with `what` after 20 s. */
export async function waitFor(f, what) {
  const started = Date.now();
  for (;;) {
    const v = f();
    if (v) return v;
    if (Date.now() - started > 20_000) throw new Error(`${what} (waited 20 s)`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export async function launchBrowser() {
  return chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: CHROMIUM_ARGS });
}

/** A page that fails the test on any uncaught page error; console errors are collected. */
export async function newPage(browser, opts = {}) {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: opts.colorScheme ?? 'light' });
  const page = await ctx.newPage();
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(String(e)));
  page.setDefaultTimeout(20_000);
  return page;
}
