//! `leaguekit simulate --tune`: the tuner on the embedded store. Prints each trial's
//! distance to the [tune] targets and the best quotas, and writes OUT/tune.json,
//! OUT/tuned.toml (the season file with the best quotas, everything else as written),
//! and the charts tune-progress.svg/.png and tuned.svg/.png.

use std::path::PathBuf;
use std::time::Instant;

use leaguekit::Season;
use leaguekit::season::{rewrite_late_seats, rewrite_quotas};
use leaguekit::sim::{chart, tune};

use crate::Cli;
use crate::common::{Failure, emit, print, usage};
use crate::simulate::{SimulateArgs, bar, options, peak_mib, write_report};

pub(crate) async fn run(cli: &Cli, season: Season, args: &SimulateArgs) -> Result<(), Failure> {
    if cli.redis.is_some() {
        return Err(usage(
            "--tune runs on the embedded store (hundreds of seasons); drop --redis",
        ));
    }
    let Some(config) = season.tune.clone() else {
        return Err(usage(format!(
            "the season file has no [tune] section; add one, e.g.\n\n[tune]\nafter = 12\n\
             targets = {{ {} = \"1%\" }}\nvary = [\"promote\", \"demote\"]\n\n(see config/season.toml)",
            season.tiers.last().map_or("diamond", |t| t.name.as_str())
        )));
    };
    let path = cli
        .config
        .clone()
        .unwrap_or_else(|| PathBuf::from("config/season.toml"));
    let text = std::fs::read_to_string(&path)
        .map_err(|e| usage(format!("cannot read {}: {e}", path.display())))?;
    let out = &args.out;
    std::fs::create_dir_all(out)
        .map_err(|e| usage(format!("cannot create {}: {e}", out.display())))?;
    let options = options(&season, args);
    let bar = bar(
        args.quiet,
        u64::from(config.trials),
        &format!("tuning {}", season.name),
        "trial",
    );
    let started = Instant::now();
    let tuned = tune::tune(&season, &options, args.threads.unwrap_or(0), |done, _| {
        bar.set_position(u64::from(done))
    })?;
    bar.finish_and_clear();
    if !args.quiet {
        eprintln!(
            "ran {} trials in {:.2} s (peak memory {})",
            tuned.report.trials.len(),
            started.elapsed().as_secs_f64(),
            peak_mib().map_or("unknown".to_owned(), |m| format!("{m:.0} MiB"))
        );
    }
    let file = path.display().to_string();
    let mut new_text = rewrite_quotas(&text, &file, &tuned.quotas)
        .map_err(|e| usage(format!("the tuned quotas do not make a valid season: {e}")))?;
    if config.late_promotion_within.is_some() {
        new_text = rewrite_late_seats(&new_text, &file, tuned.late_seats).map_err(|e| {
            usage(format!(
                "the tuned late seats do not make a valid season: {e}"
            ))
        })?;
    }
    let header = format!(
        "# Written by `leaguekit simulate --tune` from {file}: its promote and demote quotas\n\
         # (and [brackets] early_cap and late_after, with a fairness target)\n\
         # replaced by trial {}'s ({:.2} pp from the [tune] targets, against {:.2} pp), the\n\
         # rest as written (comments beside the quotas are the original's).\n",
        tuned.report.best_trial, tuned.report.best_distance, tuned.report.current_distance
    );
    let tuned_path = out.join("tuned.toml");
    std::fs::write(&tuned_path, header + &new_text)
        .map_err(|e| usage(format!("cannot write {}: {e}", tuned_path.display())))?;
    write_report(&tuned.report, &out.join("tune.json"))?;
    chart::write_tuning(&tuned.report, &tuned.current, &tuned.tuned, out)
        .map_err(|e| usage(e.to_string()))?;
    if args.json {
        return print(&tuned.report);
    }
    let mut text = tuned.report.tables(tuned.report.current());
    text.push_str(&format!(
        "\nwrote {dir}/tuned.toml, tune.json, tune-progress.svg/.png, tuned.svg/.png\n\
         check it: leaguekit --config {dir}/tuned.toml check\n",
        dir = out.display()
    ));
    emit(&text)
}
