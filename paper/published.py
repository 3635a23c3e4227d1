"""Published numbers, transcribed by hand from shared/METHODS.md ("Experiments to reproduce").

FALLBACK ONLY. `paper/build.py` takes a published number from the experiment's results JSON (its
"paper" keys) whenever the JSON has it, and comes here only for what the JSON lacks. Nothing in this
module is a result of ours: every value below is a number printed in one of the source papers, as
restated in METHODS.md. Where METHODS.md gives no number, the entry is absent (never guessed).

Keys follow the results JSON layout of the matching experiment script so that the build can treat
both sources alike.
"""

from __future__ import annotations

SOURCE = "shared/METHODS.md, 'Experiments to reproduce' (transcribed)"

# fsNB Table 1: mean test error per scenario, then mean number of selected predictors and of
# selected fully-noisy predictors (None: the paper has no such number for that method).
FSNB_TABLE1_ERROR = {
    "NB": {"DI": 0.076, "CI": 0.082, "DR": 0.152, "CR": 0.132},
    "SNB": {"DI": 0.080, "CI": 0.083, "DR": 0.076, "CR": 0.097},
    "WNB": {"DI": 0.075, "CI": 0.082, "DR": 0.131, "CR": 0.132},
    "aL1/L2-NB": {"DI": 0.079, "CI": 0.083, "DR": 0.171, "CR": 0.158},
    "fsNB": {"DI": 0.077, "CI": 0.083, "DR": 0.070, "CR": 0.090},
    "CFS+NB": {"DI": 0.166, "CI": 0.087, "DR": 0.082, "CR": 0.083},
}
FSNB_TABLE1_SELECTED = {
    "SNB": {"DI": 6.2, "CI": 6.0, "DR": 5.7, "CR": 5.5},
    "aL1/L2-NB": {"DI": 6.5, "CI": 6.0, "DR": 10.2, "CR": 11.8},
    "fsNB": {"DI": 6.3, "CI": 5.3, "DR": 5.6, "CR": 6.6},
    "CFS+NB": {"DI": 10.8, "CI": 10.0, "DR": 10.4, "CR": 10.8},
}
FSNB_TABLE1_NOISY = {
    "SNB": {"DI": 0.6, "CI": 0.8, "DR": 0.4, "CR": 0.8},
    "aL1/L2-NB": {"DI": 0.2, "CI": 0.1, "DR": 5.1, "CR": 5.9},
    "fsNB": {"DI": 0.3, "CI": 0.1, "DR": 0.2, "CR": 1.1},
}
# fsNB §7: mean number of evaluations of fsNB on the synthetic data and on Diabetes.
FSNB_EVALUATIONS = {"synthetic": 6732, "diabetes": 905}

# fsNB Table 2 (Diabetes): METHODS.md restates fsNB's errors only, one per quartile threshold.
FSNB_TABLE2_ERROR = {"fsNB": [0.21, 0.26, 0.16]}

# L1NB Table 2 (Flags, religion): (value, selected predictors); METHODS.md gives no predictor count
# for NB+FSS and WNB+FSS.
L1NB_FLAGS = {
    "L1-NB": (0.49, 3.8),
    "SNB": (0.50, 12.9),
    "NB+FSS": (0.21, None),
    "WNB+FSS": (0.30, None),
}
# L1NB timing at n = 1000, p = 100 (seconds).
L1NB_TIMING_SECONDS = {"L1-NB": 7.1, "SNB": 140.0, "CMIM prefilter": 19.1}

# Stream Tables 1-2 and L1NB Soybean: METHODS.md restates no published numbers.
STREAM_TABLES = None
L1NB_SOYBEAN = None
