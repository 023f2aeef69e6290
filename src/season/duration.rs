//! Durations as season files write them (`30s`, `15m`, `24h`, `7d`), and their
//! printed forms. Pure.

use std::time::Duration;

use super::parse::MAX_WINDOW;

/// A duration such as `30s`, `15m`, `24h` or `7d`, greater than zero and at most 30 days.
pub(super) fn parse_window(text: &str) -> Result<Duration, String> {
    let how = "write a whole number followed by s, m, h or d (e.g. \"30s\", \"15m\", \"24h\", \
               \"7d\"), between 1s and 30d";
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let unit_secs = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return Err(format!("{text:?} is not a duration; {how}")),
    };
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("{text:?} is not a duration; {how}"))?;
    let d = n
        .checked_mul(unit_secs)
        .map(Duration::from_secs)
        .unwrap_or(Duration::MAX);
    if d.is_zero() {
        return Err(format!(
            "{text:?} is zero, so no retry would be recognised; {how}"
        ));
    }
    if d > MAX_WINDOW {
        return Err(format!("{text:?} is longer than 30 days; {how}"));
    }
    Ok(d)
}

/// A duration such as `0s`, `500ms`, `5s`, `15m`, `24h` or `180d`, within `min..=max`.
pub(super) fn parse_duration(text: &str, min: Duration, max: Duration) -> Result<Duration, String> {
    let how = format!(
        "write a whole number followed by ms, s, m, h or d (e.g. \"5s\", \"15m\", \"180d\"), \
         from {} to {}",
        fmt_duration(min),
        fmt_duration(max)
    );
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let unit_ms: u64 = match unit {
        "ms" => 1,
        "s" => 1000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        _ => return Err(format!("{text:?} is not a duration; {how}")),
    };
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("{text:?} is not a duration; {how}"))?;
    let d = n
        .checked_mul(unit_ms)
        .map(Duration::from_millis)
        .unwrap_or(Duration::MAX);
    if d < min || d > max {
        return Err(format!("{text:?} is out of range; {how}"));
    }
    Ok(d)
}

/// `5s`, `10m`, `180d`: the largest whole unit.
pub(super) fn fmt_duration(d: Duration) -> String {
    let ms = d.as_millis();
    for (unit, size) in [
        ("d", 86_400_000),
        ("h", 3_600_000),
        ("m", 60_000),
        ("s", 1000),
    ] {
        if ms >= size && ms.is_multiple_of(size) {
            return format!("{}{unit}", ms / size);
        }
    }
    format!("{ms}ms")
}

/// A length such as `169 h` or `24 h 30 min`.
pub(super) fn fmt_millis(ms: u64) -> String {
    let (h, rest) = (ms / 3_600_000, ms % 3_600_000);
    let (m, rest) = (rest / 60_000, rest % 60_000);
    let (s, milli) = (rest / 1000, rest % 1000);
    let mut out = format!("{h} h");
    if m > 0 {
        out.push_str(&format!(" {m} min"));
    }
    if s > 0 || milli > 0 {
        if milli > 0 {
            out.push_str(&format!(" {s}.{milli:03} s"));
        } else {
            out.push_str(&format!(" {s} s"));
        }
    }
    out
}
