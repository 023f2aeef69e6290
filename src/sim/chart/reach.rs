//! How long players take to reach each tier: for each tier above the bottom, the share
//! of the players who played that had reached it within `d` periods of their first (a
//! cumulative distribution, so the spread shows, not only the average).

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

use super::{Chart, SIZE, both, legend, tier_color};
use crate::sim::SimReport;

struct Reach<'a>(&'a SimReport);

impl Chart for Reach<'_> {
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let report = self.0;
        area.fill(&WHITE).map_err(|e| e.to_string())?;
        let periods = report.periods.len().max(2);
        let mut chart = ChartBuilder::on(area)
            .caption(
                format!(
                    "{}: share of players who reached each tier, by periods since their first",
                    report.season
                ),
                ("sans-serif", 22),
            )
            .margin(16)
            .x_label_area_size(44)
            .y_label_area_size(70)
            .build_cartesian_2d(0f64..(periods - 1) as f64, 0f64..100.0)
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .x_desc("periods after a player's first")
            .y_desc("% of players who played")
            .x_labels(periods.clamp(2, 20))
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_label_formatter(&|y| format!("{y:.0}%"))
            .light_line_style(WHITE.mix(0.0))
            .label_style(("sans-serif", 15))
            .axis_desc_style(("sans-serif", 17))
            .draw()
            .map_err(|e| e.to_string())?;
        for (i, r) in report.reach.iter().enumerate().skip(1) {
            let players = r.reached + r.never;
            if players == 0 {
                continue;
            }
            let color = tier_color(&r.tier, i);
            let mut seen = 0u64;
            let points: Vec<(f64, f64)> = r
                .distribution
                .iter()
                .enumerate()
                .map(|(d, n)| {
                    seen += n;
                    (d as f64, 100.0 * seen as f64 / players as f64)
                })
                .collect();
            let label = match (r.median_periods, r.p90_periods) {
                (Some(m), Some(p)) => format!("{} (reached: median {m}, p90 {p} periods)", r.tier),
                _ => format!("{} (nobody)", r.tier),
            };
            chart
                .draw_series(LineSeries::new(points, color.stroke_width(3)))
                .map_err(|e| e.to_string())?
                .label(label)
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 3), (x + 14, y + 3)], color.filled())
                });
        }
        legend(&mut chart)
    }
}

/// Writes `reach.svg/.png`.
pub(super) fn write(report: &SimReport, dir: &Path) -> Result<(), super::ChartError> {
    both(dir, "reach", SIZE, &Reach(report))
}
