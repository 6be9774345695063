import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import { api } from './api';
import { setLang } from './i18n';
import './styles.css';

async function start() {
  // Dev only: `npm run dev` then open /?mock — a fixture backend, no papayu needed.
  if (import.meta.env.DEV && new URLSearchParams(location.search).has('mock')) {
    const { mockTransport } = await import('./dev/mock');
    const { setTransport } = await import('./transport');
    setTransport(mockTransport());
  }
  // Pick the transport now: the HTTP one moves #token= out of the address bar at once.
  const { transport } = await import('./transport');
  transport();
  // The language papayu chose (PAPAYU_LANG, else the locale), else the browser's.
  const chosen = await api.appInfo().then((info) => info.lang ?? null, () => null);
  setLang(chosen, navigator.language);
  createRoot(document.getElementById('root')!).render(
    <StrictMode>
      <App />
    </StrictMode>,
  );
}
void start();
