//! Charts of a simulation, as SVG and PNG: tier populations and movement per period
//! (here), how long players take to reach each tier (`reach.rs`), what late joiners
//! and small brackets meet (`fairness.rs`), and the tuner's
//! progress and tuned ladder (`tune.rs`).
//!
//! Text is drawn with DejaVu Sans, compiled in (`assets/`), so a chart looks the same
//! on a machine without fonts, such as CI.
//!
//! Owns: drawing. Must not: compute a figure the report does not hold.

mod fairness;
mod reach;
mod tune;

pub use fairness::write_fairness_comparison;
pub use tune::write_tuning;

use std::path::Path;
use std::sync::Once;

use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use crate::sim::SimReport;

/// A chart that could not be drawn or written.
#[derive(Debug, thiserror::Error)]
#[error("cannot draw {file}: {message}; check that the output directory is writable")]
pub struct ChartError {
    /// The file being drawn.
    pub file: String,
    /// What went wrong.
    pub message: String,
}

const FONT: &[u8] = include_bytes!("../../../assets/DejaVuSans.ttf");
const SIZE: (u32, u32) = (1100, 620);

fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The font is compiled in and known to parse; a failure would only lose text.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, FONT);
    });
}

/// Tier colours: metal-like for the usual names, a palette for the rest.
fn tier_color(name: &str, index: usize) -> RGBColor {
    match name.to_ascii_lowercase().as_str() {
        "bronze" => RGBColor(0xB0, 0x6A, 0x2C),
        "silver" => RGBColor(0x9A, 0xA3, 0xAD),
        "gold" => RGBColor(0xE0, 0xB0, 0x1E),
        "platinum" => RGBColor(0x3F, 0x9C, 0x94),
        "diamond" => RGBColor(0x4A, 0x78, 0xD8),
        "master" => RGBColor(0x8E, 0x44, 0xAD),
        _ => {
            let c = Palette99::pick(index + 3).to_rgba();
            RGBColor(c.0, c.1, c.2)
        }
    }
}

fn err(file: &Path, e: impl std::fmt::Display) -> ChartError {
    ChartError {
        file: file.display().to_string(),
        message: e.to_string(),
    }
}

/// A chart that can be drawn on any backend.
trait Chart {
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<(), String>;
}

/// Draws `chart` into an SVG and a PNG next to each other: `<stem>.svg`, `<stem>.png`.
fn both(dir: &Path, stem: &str, size: (u32, u32), chart: &impl Chart) -> Result<(), ChartError> {
    register_font();
    let svg = dir.join(format!("{stem}.svg"));
    {
        let root = SVGBackend::new(&svg, size).into_drawing_area();
        chart.draw(&root).map_err(|e| err(&svg, e))?;
        root.present().map_err(|e| err(&svg, e))?;
    }
    let png = dir.join(format!("{stem}.png"));
    {
        let root = BitMapBackend::new(&png, size).into_drawing_area();
        chart.draw(&root).map_err(|e| err(&png, e))?;
        root.present().map_err(|e| err(&png, e))?;
    }
    Ok(())
}

struct Tiers<'a>(&'a SimReport, String);
struct Movement<'a>(&'a SimReport);
struct Compare<'a>(&'a SimReport, &'a SimReport, String, String);

impl Chart for Tiers<'_> {
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<(), String> {
        tiers_into(area, self.0, &self.1)
    }
}

impl Chart for Movement<'_> {
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<(), String> {
        movement_into(area, self.0)
    }
}

impl Chart for Compare<'_> {
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let halves = area.split_evenly((1, 2));
        tiers_into(&halves[0], self.0, &self.2)?;
        tiers_into(&halves[1], self.1, &self.3)
    }
}

type Plot<'a, DB> = ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// Axes and grid shared by every chart: periods across, player counts up (shown
/// without sign, since demotions are drawn below zero).
fn mesh<DB: DrawingBackend>(
    chart: &mut Plot<'_, DB>,
    periods: usize,
    y: &str,
) -> Result<(), String> {
    chart
        .configure_mesh()
        .x_desc("period")
        .y_desc(y)
        .x_labels(periods.clamp(2, 20))
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| format!("{:.0}", y.abs()))
        .light_line_style(WHITE.mix(0.0))
        .label_style(("sans-serif", 15))
        .axis_desc_style(("sans-serif", 17))
        .draw()
        .map_err(|e| e.to_string())
}

/// The tier legend, top right.
fn legend<'a, DB: DrawingBackend + 'a>(chart: &mut Plot<'a, DB>) -> Result<(), String> {
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.3))
        .label_font(("sans-serif", 15))
        .draw()
        .map_err(|e| e.to_string())
}

/// Stacked tier populations per period into `area`.
fn tiers_into<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    report: &SimReport,
    title: &str,
) -> Result<(), String> {
    area.fill(&WHITE).map_err(|e| e.to_string())?;
    let periods = report.periods.len().max(1) as f64;
    let totals: Vec<u64> = report
        .periods
        .iter()
        .map(|p| p.players.values().sum())
        .collect();
    let top = (*totals.iter().max().unwrap_or(&1)).max(1) as f64 * 1.08;
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 24))
        .margin(16)
        .x_label_area_size(44)
        .y_label_area_size(70)
        .build_cartesian_2d(1f64..periods.max(2.0), 0f64..top)
        .map_err(|e| e.to_string())?;
    mesh(&mut chart, report.periods.len(), "players placed")?;
    // Stack from the bottom tier up: draw each tier's cumulative top, largest first,
    // so every band shows the tier between its cumulative bottom and top.
    let n = report.tiers.len();
    for i in (0..n).rev() {
        let color = tier_color(&report.tiers[i], i);
        let points: Vec<(f64, f64)> = report
            .periods
            .iter()
            .enumerate()
            .map(|(k, p)| {
                let cum: u64 = report.tiers[..=i]
                    .iter()
                    .map(|t| p.players.get(t).copied().unwrap_or(0))
                    .sum();
                (k as f64 + 1.0, cum as f64)
            })
            .collect();
        chart
            .draw_series(
                AreaSeries::new(points, 0.0, color.mix(0.9).filled())
                    .border_style(WHITE.stroke_width(1)),
            )
            .map_err(|e| e.to_string())?
            .label(report.tiers[i].clone())
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 14, y + 6)], color.filled()));
    }
    legend(&mut chart)?;
    Ok(())
}

/// Promotions (up) and demotions (down) per tier per period into `area`.
fn movement_into<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    report: &SimReport,
) -> Result<(), String> {
    area.fill(&WHITE).map_err(|e| e.to_string())?;
    let n = report.tiers.len().max(1);
    let up = report
        .periods
        .iter()
        .flat_map(|p| p.promoted.values())
        .copied()
        .max()
        .unwrap_or(0)
        .max(1) as f64;
    let down = report
        .periods
        .iter()
        .flat_map(|p| p.demoted.values())
        .copied()
        .max()
        .unwrap_or(0)
        .max(1) as f64;
    let periods = report.periods.len() as f64;
    let mut chart = ChartBuilder::on(area)
        .caption(
            "Promotions (up) and demotions (down) per tier",
            ("sans-serif", 24),
        )
        .margin(16)
        .x_label_area_size(44)
        .y_label_area_size(70)
        .build_cartesian_2d(0.5f64..periods + 0.5, -down * 1.1..up * 1.1)
        .map_err(|e| e.to_string())?;
    mesh(&mut chart, report.periods.len(), "players moved")?;
    let width = 0.8 / n as f64;
    for (i, tier) in report.tiers.iter().enumerate() {
        let color = tier_color(tier, i);
        let bars: Vec<Rectangle<(f64, f64)>> = report
            .periods
            .iter()
            .enumerate()
            .flat_map(|(k, p)| {
                let x0 = k as f64 + 1.0 - 0.4 + i as f64 * width;
                let x1 = x0 + width * 0.9;
                let promoted = p.promoted.get(tier).copied().unwrap_or(0) as f64;
                let demoted = p.demoted.get(tier).copied().unwrap_or(0) as f64;
                [
                    Rectangle::new([(x0, 0.0), (x1, promoted)], color.filled()),
                    Rectangle::new([(x0, -demoted), (x1, 0.0)], color.mix(0.45).filled()),
                ]
            })
            .collect();
        chart
            .draw_series(bars)
            .map_err(|e| e.to_string())?
            .label(tier.clone())
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 14, y + 6)], color.filled()));
    }
    chart
        .draw_series(LineSeries::new(
            [(0.5, 0.0), (periods + 0.5, 0.0)],
            BLACK.stroke_width(1),
        ))
        .map_err(|e| e.to_string())?;
    legend(&mut chart)?;
    Ok(())
}

/// What a report ran on, for a chart title.
fn subtitle(report: &SimReport) -> String {
    match (&report.options, &report.replay) {
        (Some(o), _) => format!("{} players, seed {}", o.players, o.seed),
        (None, Some(r)) => format!("replay of {}", r.file),
        (None, None) => String::new(),
    }
}

/// Writes `tiers.svg/.png`, `movement.svg/.png`, `reach.svg/.png` and
/// `fairness.svg/.png` into `dir`.
pub fn write_charts(report: &SimReport, dir: &Path) -> Result<(), ChartError> {
    let title = format!("{}: players per tier ({})", report.season, subtitle(report));
    both(dir, "tiers", SIZE, &Tiers(report, title))?;
    both(dir, "movement", SIZE, &Movement(report))?;
    reach::write(report, dir)?;
    fairness::write(report, dir)?;
    Ok(())
}

/// Writes `compare.svg/.png`: the two seasons' tier populations side by side.
pub fn write_comparison(a: &SimReport, b: &SimReport, dir: &Path) -> Result<(), ChartError> {
    let chart = Compare(
        a,
        b,
        format!("{} (config)", a.season),
        format!("{} (--compare)", b.season),
    );
    both(dir, "compare", (1500, 600), &chart)
}
