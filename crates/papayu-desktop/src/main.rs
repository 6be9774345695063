//! `papayu-desktop`: the web UI (`papayu-app/ui-dist`) in a Tauri 2 window. Glue only: every command is a
//! one-line adapter over the same `papayu_app::App` call that `papayu ui` serves over HTTP
//! (docs/UI-API.md); the UI calls `invoke(command, { args })`.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

use papayu_app::api::*;
use papayu_app::{ApiError, App, AppOptions, Transport};
use tauri::State;

/// One Tauri command per App command: `invoke(name, { args })` → `App::name(args)`.
macro_rules! adapters {
    ($($name:ident($args:ty) -> $result:ty;)*) => {
        $(
            #[tauri::command]
            async fn $name(app: State<'_, App>, args: $args) -> Result<$result, ApiError> {
                app.$name(args).await
            }
        )*
    };
}

adapters! {
    app_info(NoArgs) -> AppInfo;
    recent_projects(NoArgs) -> Vec<RecentProject>;
    list_dir(ListDirArgs) -> DirListing;
    open_project(OpenProjectArgs) -> ProjectView;
    get_settings(NoArgs) -> Settings;
    save_settings(SaveSettingsArgs) -> Settings;
    provider_info(NoArgs) -> ProviderStatus;
    test_connection(TestConnectionArgs) -> ConnectionTest;
    start_chat(ChatArgs) -> JobStarted;
    start_plan(PlanArgs) -> JobStarted;
    start_prepare_apply(PrepareApplyArgs) -> JobStarted;
    start_preview_plan(PreviewPlanArgs) -> JobStarted;
    start_apply(ApplyArgs) -> JobStarted;
    job_status(JobStatusArgs) -> JobStatus;
    cancel_job(CancelJobArgs) -> CancelResult;
    undo(UndoArgs) -> papayu_patch::ApplyReport;
    redo(UndoArgs) -> papayu_patch::ApplyReport;
    history(ProjectArgs) -> papayu_patch::History;
    traces(ProjectArgs) -> Vec<TraceRow>;
    trace(TraceArgs) -> serde_json::Value;
    report(ReportArgs) -> ReportView;
    trends(TrendsArgs) -> Trends;
    open_url(OpenUrlArgs) -> OpenedUrl;
}

/// The environment, read once (SPEC §12): `PAPAYU_*`, the user's config and home directories,
/// and the key lookup settings' `api_key_env` goes through.
#[allow(
    clippy::disallowed_methods,
    reason = "frontends read the environment once (SPEC §12)"
)]
fn options() -> AppOptions {
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let home = var("HOME").unwrap_or_default();
    let config = var("XDG_CONFIG_HOME").unwrap_or_else(|| format!("{home}/.config"));
    let cache = var("XDG_CACHE_HOME").unwrap_or_else(|| format!("{home}/.cache"));
    let env = std::env::vars()
        .filter(|(k, _)| k.starts_with("PAPAYU_"))
        .collect();
    let mut o = AppOptions::new(config, Transport::Tauri)
        .env(env)
        .key_lookup(|name| std::env::var(name).ok())
        .cache_dir(cache);
    if let Some(path) = std::env::var_os("PATH").filter(|p| !p.is_empty()) {
        o = o.tool_search_path(path);
    }
    o = o.tool_selectors(
        std::env::vars()
            .filter(|(k, _)| papayu_app::is_tool_selector(k))
            .collect(),
    );
    // The UI's language: the first of the variables the CLI reads (DECISIONS D48); the UI
    // turns the tag (`ru_RU.UTF-8`, `C`…) into a language it speaks.
    if let Some(tag) = ["PAPAYU_LANG", "LC_ALL", "LC_MESSAGES", "LANG"]
        .into_iter()
        .find_map(var)
    {
        o = o.lang(tag);
    }
    // Seed 000's original app's preferences (DECISIONS D42), as `papayu` finds them.
    if let Some(data) =
        var("XDG_DATA_HOME").or_else(|| (!home.is_empty()).then(|| format!("{home}/.local/share")))
    {
        o = o.original_user_prefs(format!("{data}/papa-yu/preferences.json"));
    }
    if !home.is_empty() {
        o = o.home_dir(home);
    }
    o
}

fn main() -> std::process::ExitCode {
    let result = tauri::Builder::default()
        .manage(App::new(options()))
        .invoke_handler(tauri::generate_handler![
            app_info,
            recent_projects,
            list_dir,
            open_project,
            get_settings,
            save_settings,
            provider_info,
            test_connection,
            start_chat,
            start_plan,
            start_prepare_apply,
            start_preview_plan,
            start_apply,
            job_status,
            cancel_job,
            undo,
            redo,
            history,
            traces,
            trace,
            report,
            trends,
            open_url,
        ])
        .run(tauri::generate_context!());
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            #[allow(clippy::print_stderr, reason = "the binary's one error report")]
            {
                eprintln!("papayu-desktop: {e}");
            }
            std::process::ExitCode::FAILURE
        }
    }
}
