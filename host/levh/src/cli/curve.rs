//! `levh curve ID [--days N]`: predicted retention per day with no recall.

use std::process::ExitCode;

use anyhow::Result;
use levh_api::Operation;

use crate::context::Context;
use crate::output;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The memory's id.
    id: super::MemoryIdArg,
    /// How many days ahead.
    #[arg(long, default_value_t = 30)]
    days: u32,
}

pub fn run(context: &Context, args: Args, json: bool) -> Result<ExitCode> {
    let curve = context.run(Operation::ForgettingCurve, |levh, scope| {
        levh_api::memories::curve(
            levh,
            scope,
            &args.id.0.to_string(),
            levh_api::requests::CurveQuery {
                days: Some(args.days),
            },
        )
    })?;
    if json {
        output::json(&curve)?;
        return Ok(ExitCode::SUCCESS);
    }
    let threshold = context.fading_threshold();
    let mut table = output::table(&["day", "date", "retention", ""]);
    for point in &curve.points {
        let bar = "█".repeat((point.retention * 30.0).round() as usize);
        let mark = if point.retention < threshold {
            " fading"
        } else {
            ""
        };
        table.add_row(vec![
            point.day.to_string(),
            point.at.get(..10).unwrap_or(&point.at).to_owned(),
            output::percent(point.retention),
            format!("{bar}{mark}"),
        ]);
    }
    output::print_table(&table);
    Ok(ExitCode::SUCCESS)
}
