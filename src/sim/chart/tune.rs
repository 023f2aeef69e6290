//! The tuner's charts: each trial's distance to the targets with the best so far
//! (`tune-progress`), and the tuned ladder next to the current one (`tuned`).

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

use super::{Chart, ChartError, Compare, SIZE, both, legend};
use crate::sim::SimReport;
use crate::sim::tune::TuneReport;

struct Progress<'a>(&'a TuneReport);

impl Chart for Progress<'_> {
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let t = self.0;
        area.fill(&WHITE).map_err(|e| e.to_string())?;
        let n = t.trials.len().max(2) as f64;
        let top = t
            .trials
            .iter()
            .map(|x| x.distance)
            .fold(0.0f64, f64::max)
            .max(1e-9)
            * 1.1;
        let mut chart = ChartBuilder::on(area)
            .caption(
                format!(
                    "Tuner: distance to the targets per trial (best {:.2} pp)",
                    t.best_distance
                ),
                ("sans-serif", 22),
            )
            .margin(16)
            .x_label_area_size(44)
            .y_label_area_size(70)
            .build_cartesian_2d(0.5f64..n + 0.5, 0f64..top)
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .x_desc("trial")
            .y_desc("distance (percentage points)")
            .x_label_formatter(&|x| format!("{x:.0}"))
            .light_line_style(WHITE.mix(0.0))
            .label_style(("sans-serif", 15))
            .axis_desc_style(("sans-serif", 17))
            .draw()
            .map_err(|e| e.to_string())?;
        let grey = RGBColor(0x90, 0x90, 0x90);
        chart
            .draw_series(
                t.trials
                    .iter()
                    .map(|x| Circle::new((x.trial as f64, x.distance), 4, grey.filled())),
            )
            .map_err(|e| e.to_string())?
            .label("trial")
            .legend(move |(x, y)| Circle::new((x + 7, y), 4, grey.filled()));
        let mut best = f64::INFINITY;
        let line: Vec<(f64, f64)> = t
            .trials
            .iter()
            .map(|x| {
                best = best.min(x.distance);
                (x.trial as f64, best)
            })
            .collect();
        let blue = RGBColor(0x2A, 0x5C, 0xC8);
        chart
            .draw_series(LineSeries::new(line, blue.stroke_width(3)))
            .map_err(|e| e.to_string())?
            .label("best so far")
            .legend(move |(x, y)| Rectangle::new([(x, y - 2), (x + 14, y + 2)], blue.filled()));
        legend(&mut chart)
    }
}

/// Writes `tune-progress.svg/.png` and `tuned.svg/.png` (the current ladder's tier
/// populations next to the tuned one's, on the same population) into `dir`.
pub fn write_tuning(
    tune: &TuneReport,
    current: &SimReport,
    tuned: &SimReport,
    dir: &Path,
) -> Result<(), ChartError> {
    both(dir, "tune-progress", SIZE, &Progress(tune))?;
    let chart = Compare(
        current,
        tuned,
        format!("current ladder (distance {:.2} pp)", tune.current_distance),
        format!("tuned ladder (distance {:.2} pp)", tune.best_distance),
    );
    both(dir, "tuned", (1500, 600), &chart)
}
