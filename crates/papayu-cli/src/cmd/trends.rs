//! `papayu trends [TOPIC]`: design and icon trends from the curated design domains, as cards
//! (title, link, date, summary); `--open N` opens card N's link in the system browser.

use anyhow::Result;
use papayu_integrations::research::{Researcher, block_on};
use papayu_integrations::{ResearchError, automation, trends};

use crate::cmd::research::{fail, integrations_config};
use crate::cmd::session::print_json;
use crate::exit::{Exit, UsageError};
use crate::global::Global;

/// Search design and icon trends on the curated domains.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// What to look for (default: UI design and icon trends).
    pub topic: Option<String>,
    /// Open card N's link (1-based) with the system opener.
    #[arg(long, value_name = "N")]
    pub open: Option<usize>,
}

/// Exit 0 with the cards; 2 when research is off; 1 when the service fails.
pub fn run(args: &Args, global: &Global) -> Result<Exit> {
    let config = integrations_config()?;
    let outcome = Researcher::new(config.research.clone()).and_then(|r| {
        block_on(trends::trends(
            &r,
            args.topic.as_deref(),
            &config.trends_domains,
        ))
        .unwrap_or_else(|| {
            Err(ResearchError::Client {
                message: "the research thread failed".to_owned(),
            })
        })
    });
    let found = match outcome {
        Ok(t) => t,
        Err(e) => return fail(e.code(), &e.to_string(), global),
    };
    if global.json {
        print_json(&found)?;
    } else {
        println!(
            "{} {}",
            found.topic,
            crate::tr!(
                "trends-header",
                cards = found.cards.len(),
                domains = found.domains.len()
            )
        );
        for (i, card) in found.cards.iter().enumerate() {
            let date = card
                .date
                .as_deref()
                .map(|d| format!(" · {}", d.chars().take(10).collect::<String>()))
                .unwrap_or_default();
            println!(
                "\n[{}] {}\n    {}{date}\n    {}\n    {}",
                i + 1,
                card.title,
                card.source,
                card.url,
                card.summary
            );
        }
    }
    if let Some(n) = args.open {
        let card = n
            .checked_sub(1)
            .and_then(|i| found.cards.get(i))
            .ok_or_else(|| {
                UsageError(format!("--open {n}: there are {} cards", found.cards.len()))
            })?;
        if let Err(e) = automation::open_url(&card.url, config.automation.opener.as_deref()) {
            return fail(e.code(), &e.to_string(), global);
        }
    }
    Ok(Exit::Ok)
}
