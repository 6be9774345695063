//! Open a project, preview a plan document, apply it, undo it — the browser UI's flow without
//! a model: `cargo run -p papayu-app --example preview_and_apply -- <project-dir>`.
#![allow(clippy::print_stdout, reason = "an example prints what it does")]

use papayu_app::api::{ApplyArgs, OpenProjectArgs, PreviewPlanArgs, UndoArgs};
use papayu_app::{App, AppOptions, Transport};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let root = camino::Utf8Path::from_path(dir.path()).ok_or("temp dir is not UTF-8")?;
    let project_dir = root.join("project");
    fs_err::create_dir_all(&project_dir)?;
    let app = App::new(AppOptions::new(root.join("config"), Transport::Http));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let project = app
            .open_project(OpenProjectArgs {
                path: project_dir.to_string(),
            })
            .await?;
        println!("opened {}", project.path);
        let plan = r#"{"actions": [{"kind": "CREATE_FILE", "path": "hello.txt", "content": "hi\n"}], "summary": "say hi"}"#;
        let job = app
            .start_preview_plan(PreviewPlanArgs {
                project: project.path.clone(),
                plan: plan.into(),
            })
            .await?;
        let preview = app.wait(&job.job_id).await?;
        println!("preview:\n{}", preview["preview"]["files"][0]["diff"].as_str().unwrap_or(""));
        let job = app
            .start_apply(ApplyArgs {
                project: project.path.clone(),
                preview_id: preview["preview_id"].as_str().unwrap_or_default().into(),
                selection: vec![0],
                confirmed_deletes: false,
            })
            .await?;
        let outcome = app.wait(&job.job_id).await?;
        println!("applied: {}", outcome["applied"]);
        let undone = app
            .undo(UndoArgs {
                project: project.path,
                force: false,
            })
            .await?;
        println!("undone as transaction {}", undone.tx_id);
        Ok::<_, Box<dyn std::error::Error>>(())
    })
}
