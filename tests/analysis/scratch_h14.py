import sys
from pathlib import Path
import pandas as pd
import pytest
sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_export_command import *  # noqa

def test_show(study, driven, tmp_path):
    print(run_export(study.slug, "--out", str(tmp_path), "--include-excluded"))
    df = pd.read_csv(tmp_path / "trials.csv")
    pd.set_option("display.width", 250); pd.set_option("display.max_columns", 100)
    print(df.iloc[[0, 3, 12, 30, 36]].T.to_string())
    t, p = selectors.study_frame(study)
    print(t.dtypes.value_counts())
    print(p.T.to_string())
    print((tmp_path / "codebook.md").read_text()[:1500])
