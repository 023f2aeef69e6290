//! What late joiners and small brackets meet: each tier's promotion rate by the tenth
//! of the period the player joined in (left), and the brackets closed by players in
//! the bracket (right), for one or two placement rules (the season's and today's, or
//! two seasons' with `--compare`): the first drawn solid, the second light.

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

use super::{both, legend, tier_color};
use crate::sim::{FairnessFigures, SimReport};

struct Fairness<'a> {
    report: &'a SimReport,
    rules: Vec<(String, &'a FairnessFigures)>,
}

impl Fairness<'_> {
    fn by_join<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<(), String> {
        area.fill(&WHITE).map_err(|e| e.to_string())?;
        let top = self
            .rules
            .iter()
            .flat_map(|(_, f)| f.tiers.iter().flat_map(|t| t.by_join.iter()))
            .filter_map(|r| r.percent)
            .fold(1.0f64, f64::max);
        let mut chart = ChartBuilder::on(area)
            .caption(
                format!("{}: promotion rate by join time", self.report.season),
                ("sans-serif", 22),
            )
            .margin(16)
            .x_label_area_size(44)
            .y_label_area_size(60)
            .build_cartesian_2d(0f64..100.0, 0f64..top * 1.15)
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .x_desc("joined at (% of the period)")
            .y_desc("promoted (%)")
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_label_formatter(&|y| format!("{y:.0}%"))
            .light_line_style(WHITE.mix(0.0))
            .label_style(("sans-serif", 15))
            .axis_desc_style(("sans-serif", 17))
            .draw()
            .map_err(|e| e.to_string())?;
        let tiers = self.report.tiers.len().saturating_sub(1);
        for (k, (name, f)) in self.rules.iter().enumerate() {
            for (i, t) in f.tiers.iter().enumerate().take(tiers) {
                let base = tier_color(&t.tier, i);
                let (color, width) = if k == 0 {
                    (base.mix(1.0), 3)
                } else {
                    (base.mix(0.45), 2)
                };
                let points: Vec<(f64, f64)> = t
                    .by_join
                    .iter()
                    .enumerate()
                    .filter_map(|(d, r)| Some((d as f64 * 10.0 + 5.0, r.percent?)))
                    .collect();
                chart
                    .draw_series(LineSeries::new(points, color.stroke_width(width)))
                    .map_err(|e| e.to_string())?
                    .label(format!("{} ({name})", t.tier))
                    .legend(move |(x, y)| {
                        Rectangle::new([(x, y - 3), (x + 14, y + 3)], color.filled())
                    });
            }
        }
        legend(&mut chart)
    }

    fn sizes<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<(), String> {
        area.fill(&WHITE).map_err(|e| e.to_string())?;
        let labels = &self.report.fairness.buckets;
        let top = self
            .rules
            .iter()
            .flat_map(|(_, f)| f.brackets.iter())
            .copied()
            .max()
            .unwrap_or(1)
            .max(1) as f64;
        let n = labels.len() as f64;
        let mut chart = ChartBuilder::on(area)
            .caption("brackets by players at the close", ("sans-serif", 22))
            .margin(16)
            .x_label_area_size(44)
            .y_label_area_size(70)
            .build_cartesian_2d(-0.5f64..n - 0.5, 0f64..top * 1.15)
            .map_err(|e| e.to_string())?;
        let names = labels.clone();
        chart
            .configure_mesh()
            .x_desc("players in the bracket")
            .y_desc("brackets")
            .x_labels(labels.len())
            .x_label_formatter(&move |x| {
                let i = x.round();
                if (x - i).abs() < 0.01 && i >= 0.0 {
                    names.get(i as usize).cloned().unwrap_or_default()
                } else {
                    String::new()
                }
            })
            .y_label_formatter(&|y| format!("{y:.0}"))
            .light_line_style(WHITE.mix(0.0))
            .label_style(("sans-serif", 15))
            .axis_desc_style(("sans-serif", 17))
            .draw()
            .map_err(|e| e.to_string())?;
        let width = 0.8 / self.rules.len().max(1) as f64;
        for (k, (name, f)) in self.rules.iter().enumerate() {
            let color = if k == 0 {
                RGBColor(0x3F, 0x6F, 0xB0)
            } else {
                RGBColor(0xC0, 0x7A, 0x3A)
            };
            let bars: Vec<Rectangle<(f64, f64)>> = f
                .brackets
                .iter()
                .enumerate()
                .map(|(b, &c)| {
                    let x0 = b as f64 - 0.4 + k as f64 * width;
                    Rectangle::new([(x0, 0.0), (x0 + width * 0.9, c as f64)], color.filled())
                })
                .collect();
            chart
                .draw_series(bars)
                .map_err(|e| e.to_string())?
                .label(name.clone())
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 6), (x + 14, y + 6)], color.filled())
                });
        }
        legend(&mut chart)
    }
}

impl super::Chart for Fairness<'_> {
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let halves = area.split_evenly((1, 2));
        self.by_join(&halves[0])?;
        self.sizes(&halves[1])
    }
}

/// Writes `fairness.svg/.png`: the season's rule, and today's beside it when the
/// report has it.
pub(super) fn write(report: &SimReport, dir: &Path) -> Result<(), super::ChartError> {
    let f = &report.fairness;
    let mut rules = vec![("season's rule".to_owned(), &f.season_rule)];
    if let Some(today) = &f.today_rule {
        rules.push(("today's rule".to_owned(), today));
    }
    both(dir, "fairness", (1500, 620), &Fairness { report, rules })
}

/// Writes `compare-fairness.svg/.png`: two seasons' fairness on the same population.
pub fn write_fairness_comparison(
    a: &SimReport,
    b: &SimReport,
    dir: &Path,
) -> Result<(), super::ChartError> {
    let rules = vec![
        (format!("A: {}", a.season), &a.fairness.season_rule),
        (format!("B: {}", b.season), &b.fairness.season_rule),
    ];
    both(
        dir,
        "compare-fairness",
        (1500, 620),
        &Fairness { report: a, rules },
    )
}
