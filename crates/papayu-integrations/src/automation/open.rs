//! Opening `http(s)` URLs with the system opener.

use std::process::{Command, Stdio};

use crate::error::AutomationError;

/// `raw` as a URL papayu opens: `http` or `https` with a host and no credentials; anything
/// else (`javascript:`, `file:`, `data:`, …) is refused.
pub fn check_url(raw: &str) -> Result<url::Url, AutomationError> {
    let bad = |reason: &str| AutomationError::BadUrl {
        url: raw.to_owned(),
        reason: reason.to_owned(),
    };
    let url = url::Url::parse(raw.trim()).map_err(|e| bad(&e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(bad("only http and https URLs are opened"));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(bad("no host"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(bad("credentials in a URL are not opened"));
    }
    Ok(url)
}

/// The system's opener when none is configured.
pub fn default_opener() -> &'static str {
    if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(windows) {
        "explorer"
    } else {
        "xdg-open"
    }
}

/// Open `raw` (checked by [`check_url`]) with `opener` (default: [`default_opener`]), the URL
/// its only argument.
pub fn open_url(raw: &str, opener: Option<&str>) -> Result<url::Url, AutomationError> {
    let url = check_url(raw)?;
    let program = opener.unwrap_or(default_opener());
    let status = Command::new(program)
        .arg(url.as_str())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|e| AutomationError::Opener {
            program: program.to_owned(),
            message: e.to_string(),
        })?;
    if !status.success() && !cfg!(windows) {
        return Err(AutomationError::Opener {
            program: program.to_owned(),
            message: format!("exited with {status}"),
        });
    }
    Ok(url)
}
