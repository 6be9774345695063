//! `papayu ui`: the HTTP transport's security checks and the real backend behind it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::*;

/// A running `papayu ui --port 0 --no-open`; killed when dropped.
struct Server {
    child: Child,
    port: u16,
    token: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    fn start(project: &Project, model: &Model) -> Server {
        let mut child = project
            .command(
                model,
                &[("PAPAYU_TRACE", "1")],
                &["ui", "--port", "0", "--no-open"],
            )
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        lines.read_line(&mut line).unwrap();
        // The rest of stdout is drained so the server never blocks on a full pipe.
        std::thread::spawn(move || std::io::copy(&mut lines, &mut std::io::sink()));
        let url = line
            .trim()
            .strip_prefix("papayu ui: ")
            .unwrap_or_else(|| panic!("no URL in {line:?}"));
        let rest = url.strip_prefix("http://127.0.0.1:").unwrap();
        let (port, token) = rest.split_once("/#token=").unwrap();
        assert_eq!(token.len(), 64, "32 random bytes in hex");
        Server {
            child,
            port: port.parse().unwrap(),
            token: token.to_owned(),
        }
    }

    /// One HTTP/1.1 request; the status and the body.
    fn raw(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, String)],
        body: &str,
    ) -> (u16, String) {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let mut req = format!(
            "{method} {path} HTTP/1.1\r\nConnection: close\r\nContent-Length: {}\r\n",
            body.len()
        );
        for (k, v) in headers {
            req.push_str(&format!("{k}: {v}\r\n"));
        }
        req.push_str("\r\n");
        req.push_str(body);
        s.write_all(req.as_bytes()).unwrap();
        let mut resp = String::new();
        s.read_to_string(&mut resp).unwrap();
        let status = resp.split(' ').nth(1).unwrap().parse().unwrap();
        let body = resp
            .split_once("\r\n\r\n")
            .map(|(_, b)| b.to_owned())
            .unwrap_or_default();
        (status, body)
    }

    fn host(&self) -> (&'static str, String) {
        ("Host", format!("127.0.0.1:{}", self.port))
    }

    fn auth(&self) -> (&'static str, String) {
        ("Authorization", format!("Bearer {}", self.token))
    }

    /// A command as the UI sends it; the status and the JSON answer.
    fn call(&self, command: &str, args: Value) -> (u16, Value) {
        let (status, body) = self.raw(
            "POST",
            &format!("/api/{command}"),
            &[
                self.host(),
                self.auth(),
                ("Origin", format!("http://127.0.0.1:{}", self.port)),
                ("Content-Type", "application/json".into()),
            ],
            &args.to_string(),
        );
        (
            status,
            serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}")),
        )
    }

    fn ok(&self, command: &str, args: Value) -> Value {
        let (status, v) = self.call(command, args);
        assert_eq!(status, 200, "{command}: {v}");
        v
    }

    fn wait(&self, started: Value) -> Value {
        let id = started["job_id"].as_str().unwrap().to_owned();
        let t = Instant::now();
        loop {
            let s = self.ok("job_status", json!({"job_id": id, "since": 0}));
            if s["state"] != "running" {
                return s;
            }
            assert!(
                t.elapsed() < Duration::from_secs(30),
                "job still running: {s}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

#[test]
fn ui_refuses_requests_without_the_token_or_from_elsewhere() {
    let project = Project::new(&[]);
    let model = Model::start(&[]);
    let s = Server::start(&project, &model);
    let body = "{}";
    let forbidden = |(status, body): (u16, String)| {
        assert_eq!(status, 403, "{body}");
        let v: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["code"], "ERR_UI_FORBIDDEN");
    };
    // No token, a wrong token, a token of the right length but wrong.
    forbidden(s.raw("POST", "/api/app_info", &[s.host()], body));
    forbidden(s.raw(
        "POST",
        "/api/app_info",
        &[s.host(), ("Authorization", "Bearer nope".into())],
        body,
    ));
    let wrong = format!("Bearer {}", "0".repeat(64));
    forbidden(s.raw(
        "POST",
        "/api/app_info",
        &[s.host(), ("Authorization", wrong)],
        body,
    ));
    // A foreign Origin with the right token.
    forbidden(s.raw(
        "POST",
        "/api/app_info",
        &[s.host(), s.auth(), ("Origin", "http://evil.example".into())],
        body,
    ));
    forbidden(s.raw(
        "POST",
        "/api/app_info",
        &[
            s.host(),
            s.auth(),
            ("Origin", format!("http://127.0.0.1:{}", s.port + 1)),
        ],
        body,
    ));
    // A rebinding page's Host, for the API and the static files.
    forbidden(s.raw(
        "POST",
        "/api/app_info",
        &[("Host", format!("evil.example:{}", s.port)), s.auth()],
        body,
    ));
    forbidden(s.raw("GET", "/", &[("Host", "evil.example".into())], ""));
    // The same request done right; localhost works as well.
    let (status, _) = s.raw(
        "POST",
        "/api/app_info",
        &[("Host", format!("localhost:{}", s.port)), s.auth()],
        body,
    );
    assert_eq!(status, 200);
    // The static UI needs no token; unknown commands and bad arguments are 400s.
    let (status, page) = s.raw("GET", "/", &[s.host()], "");
    assert_eq!(status, 200);
    assert!(
        page.contains("<html") || page.contains("<!doctype html"),
        "{page}"
    );
    let (status, v) = s.call("no_such_command", json!({}));
    assert_eq!(
        (status, v["code"].as_str()),
        (400, Some("ERR_UI_BAD_REQUEST"))
    );
    let (status, v) = s.call("open_project", json!({"wrong": 1}));
    assert_eq!(
        (status, v["code"].as_str()),
        (400, Some("ERR_UI_BAD_REQUEST"))
    );
    // Bodies are capped at 8 MiB.
    let big = format!("{{\"path\": \"{}\"}}", "x".repeat(9 << 20));
    let (status, _) = s.raw("POST", "/api/list_dir", &[s.host(), s.auth()], &big);
    assert_eq!(status, 413);
    let info = s.ok("app_info", json!({}));
    assert_eq!(info["transport"], "http");
    assert_eq!(info["env"]["model"], "scripted");
}

#[test]
fn ui_listens_on_loopback_only() {
    let project = Project::new(&[]);
    let model = Model::start(&[]);
    let s = Server::start(&project, &model);
    // The kernel's table of listening TCP sockets: this port is bound to 127.0.0.1 alone.
    let table = std::fs::read_to_string("/proc/net/tcp").unwrap()
        + &std::fs::read_to_string("/proc/net/tcp6").unwrap_or_default();
    let port_hex = format!(":{:04X}", s.port);
    let listening: Vec<&str> = table
        .lines()
        .filter(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            f.len() > 3 && f[1].ends_with(&port_hex) && f[3] == "0A"
        })
        .map(|l| l.split_whitespace().nth(1).unwrap())
        .collect();
    assert_eq!(listening, [format!("0100007F{port_hex}")], "{listening:?}");
}

#[test]
fn ui_drives_the_real_backend_plan_preview_apply_undo() {
    let project = Project::new(&[("src/lib.rs", LIB_RS)]);
    let model = Model::start(&[
        read_request("src/lib.rs"),
        plan_answer("1) return 42"),
        change_answer(&sha(LIB_RS.as_bytes())),
    ]);
    let s = Server::start(&project, &model);
    let root = project.root().canonicalize().unwrap();
    let opened = s.ok("open_project", json!({"path": root}));
    let p = opened["path"].as_str().unwrap().to_owned();
    let plan = s.wait(s.ok(
        "start_plan",
        json!({"project": p, "goal": "make answer() return 42"}),
    ));
    assert_eq!(plan["state"], "done", "{plan}");
    assert_eq!(
        plan["result"]["context"]["sent_files"],
        json!(["src/lib.rs"])
    );
    let preview = s.wait(s.ok("start_prepare_apply", json!({"project": p, "goal": null})));
    assert_eq!(preview["state"], "done", "{preview}");
    let preview_id = preview["result"]["preview_id"].as_str().unwrap();
    // Deselect the note: only src/lib.rs changes.
    let applied = s.wait(s.ok("start_apply", json!({"project": p, "preview_id": preview_id, "selection": [0], "confirmed_deletes": false})));
    assert_eq!(applied["state"], "done", "{applied}");
    assert!(
        applied["events"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["stage"] == "applying")
    );
    assert_eq!(
        std::fs::read_to_string(root.join("src/lib.rs")).unwrap(),
        LIB_RS_42
    );
    assert!(!root.join("docs/NOTES.md").exists());
    let report = s.ok("undo", json!({"project": p, "force": false}));
    assert!(report["tx_id"].is_string());
    assert_eq!(
        std::fs::read_to_string(root.join("src/lib.rs")).unwrap(),
        LIB_RS
    );
    let traces = s.ok("traces", json!({"project": p}));
    assert_eq!(traces.as_array().unwrap().len(), 2);
    // Redo works once; a second one is an error with its papayu code and an HTTP status.
    s.ok("redo", json!({"project": p, "force": false}));
    assert_eq!(
        std::fs::read_to_string(root.join("src/lib.rs")).unwrap(),
        LIB_RS_42
    );
    let (status, e) = s.call("redo", json!({"project": p, "force": false}));
    assert_eq!(
        (status, e["code"].as_str()),
        (422, Some("ERR_NOTHING_TO_UNDO")),
        "{e}"
    );
}
