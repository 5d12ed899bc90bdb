"""manage.py fit_curve CSV [--sigmoid S] [--experiment yes/no|2AFC] [--log-axis] [--interval I] [--json]: fit data.

A thin shell: ``analysis.tables.curvefile`` reads the CSV (aggregated ``level,n_positive,n_total`` or trial
``level,response`` rows) and ``analysis.stats.psychometric.fit`` does the fit; this command only prints. Trial rows
with a ``participant`` column are a fit over people, so the threshold interval is widened to the participant
jackknife where it reaches further (``analysis.stats.clustered``; ``--no-jackknife`` keeps the model's).
"""

import json

from django.core.management.base import BaseCommand, CommandError

from analysis.stats import clustered
from analysis.stats.pipeline import jsonable
from analysis.stats.psychometric import EXPERIMENTS, INTERVALS, FitOptions, fit
from analysis.stats.sigmoids import NAMES
from analysis.tables.curvefile import CurveFileError, read_with_participants


class Command(BaseCommand):
    help = "Fit a psychometric function to a CSV of levels and responses and print threshold, CI, width, deviance."

    def add_arguments(self, parser):
        parser.add_argument("csv", help="level,n_positive,n_total rows or level,response (0/1) rows")
        parser.add_argument("--sigmoid", choices=NAMES, default="logistic")
        parser.add_argument("--experiment", choices=EXPERIMENTS, default="yes/no")
        parser.add_argument("--log-axis", action="store_true", help="fit on log levels (always so for weibull)")
        parser.add_argument("--decreasing", action="store_true", help="responses fall as the level rises (TTFT)")
        parser.add_argument("--threshold-pc", type=float, default=0.5,
                            help="proportion of the sigmoid's rise that the threshold marks (default 0.5)")
        parser.add_argument("--interval", choices=INTERVALS, default=FitOptions.interval,
                            help="threshold interval method (default %(default)s; docs/analysis.md compares them)")
        parser.add_argument("--no-jackknife", action="store_true",
                            help="with a participant column, keep the model's interval (rows as independent)")
        parser.add_argument("--json", action="store_true", help="print one JSON object")

    def handle(self, *args, **opts):
        try:
            data, participants = read_with_participants(
                opts["csv"], positive_levels=opts["log_axis"] or opts["sigmoid"] == "weibull")
        except FileNotFoundError:
            raise CommandError(f"{opts['csv']}: no such file") from None
        except CurveFileError as exc:
            raise CommandError(f"{opts['csv']}: {exc}") from None
        try:
            options = FitOptions(sigmoid=opts["sigmoid"], experiment=opts["experiment"], log_axis=opts["log_axis"],
                                 decreasing=opts["decreasing"], pc=opts["threshold_pc"],
                                 interval=opts["interval"])
            result = fit(data, options)
            summary = result.to_dict()
            groups = 0 if opts["no_jackknife"] else clustered.MAX_GROUPS
            summary.update(clustered.spread_keys(data.levels, data.n_positive, data.n_total, participants, options,
                                                 result, max_groups=groups))
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        summary["warnings"] = result.warnings()  # the jackknife only widens finite ends: the open sides stand
        if opts["json"]:
            # strict JSON has no infinity: an open end is null, and threshold_ci_open names the side
            self.stdout.write(json.dumps(jsonable(summary), indent=2, allow_nan=False))
            return
        lo, hi = summary["threshold_ci_95"]
        p = f"{summary['deviance_p']:.3f}" if summary["deviance_p"] is not None else "n/a"
        lines = [
            f"{summary['sigmoid']} fit, {summary['experiment']}, {summary['n_trials']} trials at "
            f"{summary['n_levels']} levels" + (" (log axis)" if summary["log_axis"] else ""),
            f"threshold ({100 * summary['threshold_pc']:g} % of the rise): {summary['threshold']:.4g}  "
            f"95 % CI [{lo:.4g}, {hi:.4g}] ({summary['interval']} interval"
            + (f", widened by a jackknife over {summary['cluster']['groups']} groups of participants"
               if summary["cluster"]["method"] else "") + ")",
            f"width (5-95 % rise, {summary['width_units']}): {summary['width']:.4g}",
            f"guess {summary['guess']:.3f}, lapse {summary['lapse']:.3f}, overdispersion eta {summary['eta']:.3f}",
            f"deviance {summary['deviance']:.3f} (bootstrap p = {p})",
        ]
        self.stdout.write("\n".join(lines))
        for warning in summary["warnings"]:
            self.stderr.write(f"warning: {warning}")

