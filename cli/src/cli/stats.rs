//! Summaries of repeated measurements, shared by the command's drivers
//! and (through `#[path]`) by the benches.

/// Sorts `values` and returns their median (the mean of the middle two for
/// an even count). `values` is not empty.
pub fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}
