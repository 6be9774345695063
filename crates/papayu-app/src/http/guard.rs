//! What every request is checked against: the launch's token, a loopback `Host`, and when an
//! `Origin` is sent, the server's own; plus the headers every response carries.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::middleware::Next;
use axum::response::Response;

use super::error_response;
use super::launch::PageFile;
use crate::{ApiError, codes};

/// The launch's secret and address (no `Debug`: the token stays out of logs), and the launch
/// page until the first request that carries the token.
#[derive(Clone)]
pub(super) struct Guard {
    pub(super) token: String,
    pub(super) port: u16,
    launch: Arc<Mutex<Option<PageFile>>>,
}

/// `n` random bytes, hex.
pub(super) fn random_hex(n: usize) -> Result<String, getrandom::Error> {
    let mut bytes = vec![0u8; n];
    getrandom::fill(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

impl Guard {
    /// A guard with a new token: 32 random bytes, hex.
    pub(super) fn new(port: u16) -> Result<Guard, getrandom::Error> {
        Ok(Guard::with_token(random_hex(32)?, port))
    }

    fn with_token(token: String, port: u16) -> Guard {
        Guard {
            token,
            port,
            launch: Arc::default(),
        }
    }

    fn launch_slot(&self) -> MutexGuard<'_, Option<PageFile>> {
        // A panic while holding the slot leaves nothing half-done in it.
        self.launch.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Keep `page` until [`retire_launch_page`](Self::retire_launch_page) (or the last clone
    /// of this guard) removes it; a page held before is removed now.
    pub(super) fn hold_launch_page(&self, page: PageFile) {
        *self.launch_slot() = Some(page);
    }

    /// Remove the launch page: the browser has used it, or it waited long enough.
    pub(super) fn retire_launch_page(&self) {
        self.launch_slot().take();
    }

    /// `Host` must name this server on loopback: a DNS-rebinding page has its own host name.
    fn host_ok(&self, headers: &HeaderMap) -> bool {
        let Some(host) = headers.get(header::HOST).and_then(|h| h.to_str().ok()) else {
            return false;
        };
        host == format!("127.0.0.1:{}", self.port) || host == format!("localhost:{}", self.port)
    }

    /// No `Origin`, or exactly this server's.
    fn origin_ok(&self, headers: &HeaderMap) -> bool {
        headers.get(header::ORIGIN).is_none_or(|origin| {
            origin.to_str().is_ok_and(|o| {
                o == format!("http://127.0.0.1:{}", self.port)
                    || o == format!("http://localhost:{}", self.port)
            })
        })
    }

    /// `Authorization: Bearer <the token>`.
    fn token_ok(&self, headers: &HeaderMap) -> bool {
        headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .is_some_and(|t| same(t.as_bytes(), self.token.as_bytes()))
    }
}

/// Constant-time equality (the token must not leak through response timing; its length is
/// no secret).
fn same(a: &[u8], b: &[u8]) -> bool {
    use subtle::ConstantTimeEq as _;
    bool::from(a.ct_eq(b))
}

fn forbidden(message: &str) -> Response {
    error_response(&ApiError::new(codes::FORBIDDEN, message))
}

/// Every request, static files included.
pub(super) async fn check_host(State(g): State<Guard>, req: Request, next: Next) -> Response {
    if !g.host_ok(req.headers()) {
        return forbidden(
            "wrong Host header: open the URL papayu ui printed (http://127.0.0.1:PORT/)",
        );
    }
    next.run(req).await
}

/// Every API request.
pub(super) async fn check_api(State(g): State<Guard>, req: Request, next: Next) -> Response {
    if !g.origin_ok(req.headers()) {
        return forbidden("requests from another origin are refused");
    }
    if !g.token_ok(req.headers()) {
        return forbidden(
            "missing or wrong token: open the URL papayu ui printed (it carries #token=…)",
        );
    }
    g.retire_launch_page();
    next.run(req).await
}

/// No sniffing, no framing, no referrer, and a content security policy of this origin only.
pub(super) async fn security_headers(req: Request, next: Next) -> Response {
    let mut res = next.run(req).await;
    let h = res.headers_mut();
    h.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    h.insert("x-frame-options", HeaderValue::from_static("DENY"));
    h.insert("referrer-policy", HeaderValue::from_static("no-referrer"));
    h.insert(
        "content-security-policy",
        HeaderValue::from_static(
            "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'",
        ),
    );
    res
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn headers(pairs: &[(header::HeaderName, &str)]) -> HeaderMap {
        pairs
            .iter()
            .map(|(k, v)| (k.clone(), HeaderValue::from_str(v).unwrap()))
            .collect()
    }

    #[test]
    fn tokens_are_new_per_guard_and_compared_whole() {
        let g = Guard::new(8080).unwrap();
        assert_eq!(g.token.len(), 64);
        assert!(g.token.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_ne!(g.token, Guard::new(8080).unwrap().token);
        let bearer = |t: &str| headers(&[(header::AUTHORIZATION, &format!("Bearer {t}"))]);
        assert!(g.token_ok(&bearer(&g.token)));
        assert!(!g.token_ok(&bearer(&g.token[..63])));
        assert!(!g.token_ok(&bearer(&format!("{}0", g.token))));
        assert!(!g.token_ok(&bearer(&"0".repeat(64))));
        assert!(!g.token_ok(&headers(&[(header::AUTHORIZATION, &g.token)])));
        assert!(!g.token_ok(&HeaderMap::new()));
    }

    #[test]
    fn only_this_servers_loopback_host_and_origin_pass() {
        let g = Guard::with_token(String::new(), 8080);
        for (host, ok) in [
            ("127.0.0.1:8080", true),
            ("localhost:8080", true),
            ("127.0.0.1:8081", false),
            ("evil.example:8080", false),
            ("127.0.0.1", false),
        ] {
            assert_eq!(g.host_ok(&headers(&[(header::HOST, host)])), ok, "{host}");
        }
        assert!(!g.host_ok(&HeaderMap::new()), "no Host");
        for (origin, ok) in [
            ("http://127.0.0.1:8080", true),
            ("http://localhost:8080", true),
            ("https://127.0.0.1:8080", false),
            ("http://127.0.0.1:8081", false),
            ("http://evil.example", false),
            ("null", false),
        ] {
            assert_eq!(
                g.origin_ok(&headers(&[(header::ORIGIN, origin)])),
                ok,
                "{origin}"
            );
        }
        assert!(g.origin_ok(&HeaderMap::new()), "no Origin: not a browser");
    }
}
