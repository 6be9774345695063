//! The launch page: a file only the user can read that sends the browser on to the tokened URL,
//! so that what papayu hands the browser opener (whose command line `ps` shows every local user)
//! carries no token.

use std::fmt::Write as _;
use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _, PermissionsExt as _};

use camino::{Utf8Path, Utf8PathBuf};
use fs_err::os::unix::fs::OpenOptionsExt as _;

use super::HttpError;

/// How long an unvisited launch page stays on disk by default.
pub const LAUNCH_PAGE_LIFETIME: std::time::Duration = std::time::Duration::from_secs(60);

/// A launch page on disk (see [`Server::write_launch_page`](super::Server::write_launch_page)):
/// give [`url`](Self::url) to the browser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchPage {
    path: Utf8PathBuf,
    url: String,
}

impl LaunchPage {
    /// The file: `launch-<random>.html`, mode 0600, in a directory of mode 0700.
    pub fn path(&self) -> &Utf8Path {
        &self.path
    }

    /// The file as a `file://` URL (the name is random, not the token).
    pub fn url(&self) -> &str {
        &self.url
    }
}

/// Why a directory will not hold the launch page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LaunchDirProblem {
    /// A file or a symbolic link is where the directory should be.
    #[error("it is not a directory")]
    NotADirectory,
    /// Another user owns it.
    #[error("it belongs to uid {owner}, not to this user")]
    NotOwned {
        /// Its owner's uid.
        owner: u32,
    },
}

/// The file a [`LaunchPage`] names; removing it is what dropping this does.
pub(super) struct PageFile(Utf8PathBuf);

impl Drop for PageFile {
    fn drop(&mut self) {
        // Already gone is as good as removed; nothing else can be done about a failure here.
        let _ = fs_err::remove_file(&self.0);
    }
}

/// Write a page that redirects to `target` (the server's own URL: digits, hex and `:/.#=`,
/// nothing that needs escaping) into `dir`, which is made private to this user.
pub(super) fn write(dir: &Utf8Path, target: &str) -> Result<(LaunchPage, PageFile), HttpError> {
    let dir = absolute(dir)?;
    private_dir(&dir)?;
    let name = super::guard::random_hex(16).map_err(|e| HttpError::Token {
        message: e.to_string(),
    })?;
    let path = dir.join(format!("launch-{name}.html"));
    let failed = |source| HttpError::LaunchPage {
        path: path.clone(),
        source,
    };
    // O_CREAT|O_EXCL: a name that exists (a planted symbolic link included) is refused.
    let mut file = fs_err::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .map_err(failed)?;
    let owned = PageFile(path.clone());
    file.write_all(html(target).as_bytes()).map_err(failed)?;
    drop(file);
    let url = file_url(&path);
    Ok((LaunchPage { path, url }, owned))
}

fn absolute(dir: &Utf8Path) -> Result<Utf8PathBuf, HttpError> {
    let failed = |source| HttpError::LaunchPage {
        path: dir.to_owned(),
        source,
    };
    let abs = std::path::absolute(dir).map_err(failed)?;
    Utf8PathBuf::from_path_buf(abs).map_err(|_| {
        failed(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "the working directory is not UTF-8",
        ))
    })
}

/// `dir` exists, is a directory (not a link to one), belongs to this user and has mode 0700.
fn private_dir(dir: &Utf8Path) -> Result<(), HttpError> {
    let failed = |source| HttpError::LaunchPage {
        path: dir.to_owned(),
        source,
    };
    if let Some(parent) = dir.parent() {
        fs_err::create_dir_all(parent).map_err(failed)?;
    }
    // Created with its final mode: never, even briefly, open to others.
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(failed(e)),
    }
    let meta = fs_err::symlink_metadata(dir).map_err(failed)?;
    let refuse = |problem| HttpError::LaunchDir {
        dir: dir.to_owned(),
        problem,
    };
    if !meta.is_dir() {
        return Err(refuse(LaunchDirProblem::NotADirectory));
    }
    if meta.uid() != rustix::process::geteuid().as_raw() {
        return Err(refuse(LaunchDirProblem::NotOwned { owner: meta.uid() }));
    }
    if meta.mode() & 0o7777 != 0o700 {
        fs_err::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).map_err(failed)?;
    }
    Ok(())
}

fn html(target: &str) -> String {
    format!(
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><meta name=\"referrer\" content=\"no-referrer\">\
<meta http-equiv=\"refresh\" content=\"0;url={target}\"><title>papayu</title></head>\n\
<body><script>location.replace(\"{target}\")</script>\
<p><a href=\"{target}\">Open papayu</a></p></body></html>\n"
    )
}

/// `/a b/c` → `file:///a%20b/c`.
fn file_url(path: &Utf8Path) -> String {
    let mut url = String::from("file://");
    for b in path.as_str().bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            url.push(char::from(b));
        } else {
            let _ = write!(url, "%{b:02X}");
        }
    }
    url
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    const TARGET: &str = "http://127.0.0.1:8080/#token=00ff";

    fn mode(path: &Utf8Path) -> u32 {
        fs_err::symlink_metadata(path).unwrap().mode() & 0o7777
    }

    fn tmp() -> (tempfile::TempDir, Utf8PathBuf) {
        let t = tempfile::tempdir().unwrap();
        let root = Utf8PathBuf::from_path_buf(t.path().to_owned()).unwrap();
        (t, root)
    }

    #[test]
    fn the_page_is_private_redirects_and_goes_with_its_owner() {
        let (_t, root) = tmp();
        let dir = root.join("run/papayu");
        let (page, file) = write(&dir, TARGET).unwrap();
        assert_eq!(page.path().parent(), Some(dir.as_path()));
        assert_eq!((mode(&dir), mode(page.path())), (0o700, 0o600));
        let name = page.path().file_name().unwrap();
        assert!(
            name.starts_with("launch-") && name.ends_with(".html"),
            "{name}"
        );
        assert_eq!(page.url(), format!("file://{}", page.path()));
        let html = fs_err::read_to_string(page.path()).unwrap();
        assert!(
            html.contains(&format!("content=\"0;url={TARGET}\"")),
            "{html}"
        );
        assert!(
            html.contains(&format!("location.replace(\"{TARGET}\")")),
            "{html}"
        );
        let (other, _keep) = write(&dir, TARGET).unwrap();
        assert_ne!(other.path(), page.path(), "a new name per page");
        drop(file);
        assert!(!page.path().exists());
        assert!(other.path().exists());
    }

    #[test]
    fn an_existing_directory_is_made_private_and_a_link_is_refused() {
        let (_t, root) = tmp();
        let dir = root.join("open");
        fs_err::create_dir(&dir).unwrap();
        fs_err::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        write(&dir, TARGET).unwrap();
        assert_eq!(mode(&dir), 0o700);
        let link = root.join("link");
        fs_err::os::unix::fs::symlink(&dir, &link).unwrap();
        let file = root.join("file");
        fs_err::write(&file, "").unwrap();
        for not_a_dir in [link, file] {
            assert!(
                matches!(
                    write(&not_a_dir, TARGET),
                    Err(HttpError::LaunchDir {
                        problem: LaunchDirProblem::NotADirectory,
                        ..
                    })
                ),
                "{not_a_dir}"
            );
        }
    }

    #[test]
    fn a_directory_of_another_user_is_refused() {
        let (_t, root) = tmp();
        // Root can give a directory away; anyone else finds one in `/`.
        let theirs = if rustix::process::geteuid().is_root() {
            let dir = root.join("theirs");
            fs_err::create_dir(&dir).unwrap();
            fs_err::os::unix::fs::chown(&dir, Some(65534), None).unwrap();
            dir
        } else {
            Utf8PathBuf::from("/")
        };
        let owner = mode_owner(&theirs);
        assert!(matches!(
            write(&theirs, TARGET),
            Err(HttpError::LaunchDir {
                problem: LaunchDirProblem::NotOwned { owner: o },
                ..
            }) if o == owner
        ));
    }

    fn mode_owner(path: &Utf8Path) -> u32 {
        fs_err::symlink_metadata(path).unwrap().uid()
    }

    #[test]
    fn file_urls_escape_what_a_url_cannot_hold() {
        assert_eq!(
            file_url(Utf8Path::new("/home/a b/ünï/x#y%.html")),
            "file:///home/a%20b/%C3%BCn%C3%AF/x%23y%25.html"
        );
    }
}
