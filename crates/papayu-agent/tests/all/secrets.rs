//! The secrets corpus: more than 40 kinds of secrets planted in a project's files and in the
//! goal, driven through the real `Agent` against a scripted model. None may reach a request
//! the model receives, nor any trace papayu writes with `PAPAYU_TRACE=1 PAPAYU_TRACE_RAW=1`.
//! Fake secrets are assembled at run time so this file holds nothing a scanner would flag.

use serde_json::json;

use crate::support::{Model, Project, plan_answer};

fn no_progress(_: &papayu_agent::Progress) {}

/// `s` repeated and cut to exactly `n` characters.
fn take(s: &str, n: usize) -> String {
    s.repeat(n / s.len() + 1)[..n].to_owned()
}

/// `(kind, value)`: every secret value, each unique.
fn secrets() -> Vec<(&'static str, String)> {
    let hex = "0123456789abcdef";
    vec![
        (
            "aws access key id",
            format!("AKIA{}", take("QWERTYUIOPASDFGH", 16)),
        ),
        ("aws secret access key", take("Zq9/Xc7+Vb5nM3k", 40)),
        (
            "stripe live key",
            format!("sk_live_{}", take("4eC39HqLyjWDarjt", 24)),
        ),
        (
            "google api key",
            format!("AIza{}", take("SyD9t_rke7-2PouQ", 35)),
        ),
        ("postgres url password", "pgPa55-w0rd-x1".to_owned()),
        (
            "django secret key",
            format!("django-insecure-{}", take("k3j4h5g6", 30)),
        ),
        (
            "slack webhook",
            format!(
                "T{}/B{}/{}",
                take("ABC123", 8),
                take("DEF456", 8),
                take("xYz789", 24)
            ),
        ),
        ("github token", format!("ghp_{}", take("a1B2c3D4e5", 36))),
        (
            "openai project key",
            format!("sk-proj-{}", take("Ab3_dE-f9", 48)),
        ),
        (
            "anthropic key",
            format!("sk-ant-api03-{}", take("aB3-_x9", 93)),
        ),
        (
            "sendgrid key",
            format!("SG.{}.{}", take("aBcDeF12", 22), take("gHiJ34_-", 43)),
        ),
        ("twilio key", format!("SK{}", take(hex, 32))),
        (
            "huggingface token",
            format!("hf_{}", take("aBcDeFgHiJ", 34)),
        ),
        ("yaml password", "yamlPw-8842".to_owned()),
        ("mysql url password", "myRootPw77".to_owned()),
        ("npm token", format!("npm_{}", take("q1W2e3R4t5", 36))),
        ("gitlab token", format!("glpat-{}", take("Ab3dE", 20))),
        ("bearer token", take("bEaReR7toKen9x", 40)),
        ("basic auth", "YWRtaW46YmFzaWMtcHctOTE=".to_owned()),
        (
            "pem private key body",
            take(
                "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt",
                64,
            ),
        ),
        (
            "json-escaped pem body",
            take("MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7", 64),
        ),
        ("curl user password", "curlUserPw-55".to_owned()),
        ("digitalocean token", format!("dop_v1_{}", take(hex, 64))),
        ("vault token", format!("hvs.{}", take("CAESIJ1k2Lm", 90))),
        (
            "jwt",
            format!(
                "eyJhbGciOiJIUzI1NiJ9.eyJ{}.{}",
                take("zdWIiOiIxMjM0", 24),
                take("SflKxwRJSMeKKF2QT4fw", 43)
            ),
        ),
        ("toml password", "tomlPw-3321".to_owned()),
        ("api key assignment", take("a1b2c3d4e5f6g7h8i9j0", 24)),
        ("client secret", "cl1entS3cret-value".to_owned()),
        ("netrc-style password", "netrcPw-6610".to_owned()),
        ("nuget password", "nugetPw-1209".to_owned()),
        ("shopify token", format!("shpat_{}", take(hex, 32))),
        (
            "pypi token",
            format!("pypi-AgEIcHlwaS5vcmc{}", take("CJGY2NkNTAwLTg", 60)),
        ),
        ("databricks token", format!("dapi{}", take(hex, 32))),
        (
            "age secret key",
            format!(
                "AGE-SECRET-KEY-1{}",
                take("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)
            ),
        ),
        (
            "telegram bot token",
            format!("987654321:AA{}", take("Fl3gT9_-x", 33)),
        ),
        ("linear key", format!("lin_api_{}", take("aB3dE6", 40))),
        ("envrc secret", "envrcOnly-4417".to_owned()),
        ("npmrc token", "npmrcOnly-9981".to_owned()),
        ("pypirc password", "pypircOnly-2271".to_owned()),
        ("netrc password", "netrcOnly-5532".to_owned()),
        ("git credentials", "gitCredOnly-8820".to_owned()),
        ("aws credentials file", "awsCredOnly-1142".to_owned()),
        ("docker config auth", "dockerAuthOnly-7788".to_owned()),
        ("gcloud credentials", "gcloudOnly-3390".to_owned()),
        ("dotenv", "dotenvOnly-6631".to_owned()),
        ("goal password", "goalPw-0091".to_owned()),
        (
            "goal stripe key",
            format!("rk_live_{}", take("Zz81Yy72", 24)),
        ),
        ("goal url password", "goalUrlPw-4412".to_owned()),
        (
            "goal slack token",
            format!("xoxb-{}-{}", take("1234567890", 12), take("aBcD", 24)),
        ),
    ]
}

fn value(all: &[(&'static str, String)], kind: &str) -> String {
    all.iter()
        .find(|(k, _)| *k == kind)
        .map(|(_, v)| v.clone())
        .unwrap()
}

fn pem(body: &str) -> String {
    let mut s = String::from("-----BEGIN RSA PRIVATE KEY-----\n");
    for i in 0..12 {
        s.push_str(&format!("{}{i:02}\n", &body[..62]));
    }
    s.push_str("-----END RSA PRIVATE KEY-----\n");
    s
}

/// The project's files: `(path, content, protected)`. Every file has a marker line so the test
/// can tell that an unprotected file's content really was sent.
fn files(s: &[(&'static str, String)]) -> Vec<(String, String, bool)> {
    let v = |k: &str| value(s, k);
    vec![
        (
            "config/settings.py".into(),
            format!(
                "# marker-settings\nAWS_ACCESS_KEY_ID = \"{}\"\nAWS_SECRET_ACCESS_KEY = \"{}\"\nSTRIPE_KEY = \"{}\"\nGOOGLE_API_KEY = \"{}\"\nDATABASE_URL = \"postgres://app:{}@db:5432/app\"\nSECRET_KEY = '{}'\nSLACK_WEBHOOK = \"https://hooks.slack.com/services/{}\"\nGITHUB_TOKEN = \"{}\"\nOPENAI_API_KEY = \"{}\"\nANTHROPIC_API_KEY = \"{}\"\nSENDGRID_API_KEY = \"{}\"\nTWILIO_API_KEY = \"{}\"\nHF_TOKEN = \"{}\"\n",
                v("aws access key id"),
                v("aws secret access key"),
                v("stripe live key"),
                v("google api key"),
                v("postgres url password"),
                v("django secret key"),
                v("slack webhook"),
                v("github token"),
                v("openai project key"),
                v("anthropic key"),
                v("sendgrid key"),
                v("twilio key"),
                v("huggingface token"),
            ),
            false,
        ),
        (
            "config/database.yml".into(),
            format!(
                "# marker-database\nproduction:\n  username: app\n  password: {}\n  url: mysql://root:{}@10.0.0.5:3306/app\n",
                v("yaml password"),
                v("mysql url password")
            ),
            false,
        ),
        (
            "src/client.js".into(),
            format!(
                "// marker-client\nconst npmToken = \"{}\";\nconst gitlab = \"{}\";\nconst headers = {{ Authorization: \"Bearer {}\" }};\nconst basic = {{ Authorization: \"Basic {}\" }};\n",
                v("npm token"),
                v("gitlab token"),
                v("bearer token"),
                v("basic auth")
            ),
            false,
        ),
        (
            "deploy/key.txt".into(),
            format!("marker-key\n{}", pem(&v("pem private key body"))),
            false,
        ),
        (
            "deploy/service-account.txt".into(),
            format!(
                "marker-sa\n{{\"type\": \"service_account\", \"private_key\": \"-----BEGIN PRIVATE KEY-----\\n{}\\n{}\\n-----END PRIVATE KEY-----\\n\", \"client_email\": \"svc@p.iam\"}}\n",
                v("json-escaped pem body"),
                v("json-escaped pem body")
            ),
            false,
        ),
        (
            "scripts/deploy.sh".into(),
            format!(
                "# marker-deploy\ncurl -u admin:{} https://api.internal/deploy\nexport DIGITALOCEAN_TOKEN={}\nexport VAULT_TOKEN={}\n",
                v("curl user password"),
                v("digitalocean token"),
                v("vault token")
            ),
            false,
        ),
        (
            "docs/setup.md".into(),
            format!(
                "marker-setup\n\nTest token: {}\n\nmachine api.internal login deployer password {}\n",
                v("jwt"),
                v("netrc-style password")
            ),
            false,
        ),
        (
            "config/app.toml".into(),
            format!(
                "# marker-app\npassword = \"{}\"\napi_key = \"{}\"\nclient_secret = \"{}\"\n",
                v("toml password"),
                v("api key assignment"),
                v("client secret")
            ),
            false,
        ),
        (
            "config/nuget.config".into(),
            format!(
                "<!-- marker-nuget -->\n<add key=\"ClearTextPassword\" value=\"{}\" />\n",
                v("nuget password")
            ),
            false,
        ),
        (
            "config/tokens.rb".into(),
            format!(
                "# marker-tokens\nSHOPIFY = \"{}\"\nPYPI = \"{}\"\nDATABRICKS = \"{}\"\nAGE = \"{}\"\nTELEGRAM = \"{}\"\nLINEAR = \"{}\"\n",
                v("shopify token"),
                v("pypi token"),
                v("databricks token"),
                v("age secret key"),
                v("telegram bot token"),
                v("linear key")
            ),
            false,
        ),
        (
            ".envrc".into(),
            format!("# marker-envrc\nexport X={}\n", v("envrc secret")),
            true,
        ),
        (
            ".npmrc".into(),
            format!("# marker-npmrc\nregistry=x\n_x={}\n", v("npmrc token")),
            true,
        ),
        (
            ".pypirc".into(),
            format!("# marker-pypirc\n[pypi]\nx = {}\n", v("pypirc password")),
            true,
        ),
        (
            ".netrc".into(),
            format!("# marker-netrc\n{}\n", v("netrc password")),
            true,
        ),
        (
            ".git-credentials".into(),
            format!("marker-gitcred {}\n", v("git credentials")),
            true,
        ),
        (
            ".aws/credentials".into(),
            format!("# marker-aws\nx = {}\n", v("aws credentials file")),
            true,
        ),
        (
            ".docker/config.json".into(),
            format!(
                "{{\"marker\": \"docker\", \"x\": \"{}\"}}\n",
                v("docker config auth")
            ),
            true,
        ),
        (
            "credentials.json".into(),
            format!(
                "{{\"marker\": \"gcloud\", \"x\": \"{}\"}}\n",
                v("gcloud credentials")
            ),
            true,
        ),
        (
            ".env".into(),
            format!("# marker-env\nX={}\n", v("dotenv")),
            true,
        ),
    ]
}

fn goal(s: &[(&'static str, String)]) -> String {
    let v = |k: &str| value(s, k);
    format!(
        "Deploy with password={} and key {} to postgres://ops:{}@db/prod, notify via {}; also check {} and {}",
        v("goal password"),
        v("goal stripe key"),
        v("goal url password"),
        v("goal slack token"),
        v("github token"),
        v("aws access key id"),
    )
}

/// Every file under `dir`, recursively, as text.
fn all_files(dir: &std::path::Path, out: &mut Vec<(String, String)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries {
        let p = e.unwrap().path();
        if p.is_dir() {
            all_files(&p, out);
        } else {
            out.push((
                p.display().to_string(),
                String::from_utf8_lossy(&std::fs::read(&p).unwrap()).into_owned(),
            ));
        }
    }
}

#[tokio::test]
async fn r_no_secret_reaches_the_model_or_the_raw_trace() {
    let s = secrets();
    assert!(s.len() >= 40, "{}", s.len());
    let files = files(&s);
    let bytes: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(p, c, _)| (p.as_str(), c.as_bytes()))
        .collect();
    let project = Project::new(&bytes);
    let mut requests: Vec<_> = files
        .iter()
        .map(|(p, _, _)| json!({"type": "read_file", "path": p}))
        .collect();
    requests.push(json!({"type": "search", "query": "KEY"}));
    requests.push(json!({"type": "search", "query": "password"}));
    let model = Model::start(&[
        json!({"actions": [], "summary": "reading", "context_requests": requests}),
        plan_answer("done"),
    ])
    .await;
    let mut agent = project.agent(
        &model,
        &[
            ("PAPAYU_TRACE", "1"),
            ("PAPAYU_TRACE_RAW", "1"),
            ("PAPAYU_CONTEXT_MAX_FILES", "64"),
            ("PAPAYU_CONTEXT_MAX_TOTAL_CHARS", "400000"),
        ],
    );
    let plan = agent.plan(&goal(&s), &no_progress).await.unwrap();
    assert_eq!(plan.context_rounds, 1);

    let received: Vec<String> = model
        .server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| String::from_utf8_lossy(&r.body).into_owned())
        .collect();
    assert_eq!(received.len(), 2);
    // The unprotected files really were sent (so the test is not vacuous), the protected
    // ones were refused.
    let second = &received[1];
    for (path, content, protected) in &files {
        let marker = content.lines().next().unwrap();
        let marker = marker
            .trim_start_matches(['#', '/', '<', '!', '-', ' ', '{'])
            .split_whitespace()
            .next()
            .unwrap();
        if *protected {
            assert!(
                !second.contains(marker),
                "{path}: protected content was sent"
            );
            assert!(
                second.contains(&format!("FILE[{path}]")),
                "{path}: no refusal note"
            );
        } else {
            assert!(second.contains(marker), "{path} ({marker}) was not sent");
        }
    }
    assert!(second.contains("[REDACTED:"), "nothing was redacted?");

    let mut written = Vec::new();
    all_files(
        &project.root().join(".papa-yu/traces").into_std_path_buf(),
        &mut written,
    );
    assert!(!written.is_empty(), "no trace written");
    for (kind, secret) in &s {
        for (i, body) in received.iter().enumerate() {
            assert!(
                !body.contains(secret.as_str()),
                "{kind} reached the model in request {i}"
            );
        }
        for (path, text) in &written {
            assert!(!text.contains(secret.as_str()), "{kind} written to {path}");
        }
    }
}

#[tokio::test]
async fn r_protected_files_named_in_answers_are_not_copied_into_traces() {
    let secret = "npmrcFixtureOnly-5521";
    let project = Project::new(&[
        (".npmrc", format!("//registry/:_x={secret}\n").as_bytes()),
        (".envrc", format!("export Y={secret}\n").as_bytes()),
    ]);
    let touch = json!({"actions": [
        {"kind": "UPDATE_FILE", "path": ".npmrc", "content": "registry=x\n"},
        {"kind": "DELETE_FILE", "path": ".envrc"}
    ], "summary": "touch config"});
    let model = Model::start(&[touch.clone(), touch]).await;
    let mut agent = project.agent(&model, &[("PAPAYU_TRACE", "1"), ("PAPAYU_TRACE_RAW", "1")]);
    let err = agent
        .prepare_apply(Some("update the npm config"), &no_progress)
        .await;
    assert!(err.is_err());
    let mut written = Vec::new();
    all_files(
        &project.root().join(".papa-yu/traces").into_std_path_buf(),
        &mut written,
    );
    assert!(!written.is_empty(), "no trace written");
    for (path, text) in &written {
        assert!(!text.contains(secret), "written to {path}");
    }
    for body in model.requests().await {
        assert!(!body.to_string().contains(secret));
    }
}

/// papayu's own prompts (every snapshot of them) and the golden traces' texts hold no
/// secret: redaction must leave them byte for byte, or the model reads a damaged protocol.
#[test]
fn papayus_own_prompts_pass_redaction_unchanged() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/all/snapshots");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let out = papayu_llm::redact(&text);
        if out != text {
            let changed: Vec<_> = text
                .lines()
                .zip(out.lines())
                .filter(|(a, b)| a != b)
                .take(3)
                .collect();
            panic!("{}: {changed:#?}", path.display());
        }
        seen += 1;
    }
    assert!(seen >= 10, "{seen}");
}
