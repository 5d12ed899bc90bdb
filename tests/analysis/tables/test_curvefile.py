"""fit_curve's CSV reader: both layouts, and errors that name the row and column."""

import pytest

from analysis.tables.curvefile import CurveFileError, parse, parse_with_participants, read


def test_aggregated_rows_keep_repeated_levels_as_blocks_and_pool_for_the_points():
    data = parse("level,n_positive,n_total\n10,1,10\n20,5,10\n10,2,5\n")
    assert data.levels.tolist() == [10.0, 10.0, 20.0]  # blocks of the same level stay rows (η sees their spread)
    assert data.n_positive.tolist() == [1.0, 2.0, 5.0] and data.n_total.tolist() == [10.0, 5.0, 10.0]
    pooled = data.pooled()
    assert pooled.levels.tolist() == [10.0, 20.0] and pooled.n_positive.tolist() == [3.0, 5.0]
    assert pooled.n_total.tolist() == [15.0, 10.0] and data.n_levels == 2


def test_trial_rows_are_counted_per_level_and_participant_and_other_columns_ignored():
    data = parse("participant,level,response,x\na,1.5,1,q\na,1.5,0,q\nb,1.5,1,q\nb,3,1,q\n")
    assert data.levels.tolist() == [1.5, 1.5, 3.0]
    assert data.n_positive.tolist() == [1.0, 1.0, 1.0]
    assert data.n_total.tolist() == [2.0, 1.0, 1.0]
    plain = parse("level,response\n1.5,1\n1.5,0\n1.5,1\n3,1\n")
    assert plain.levels.tolist() == [1.5, 3.0] and plain.n_total.tolist() == [3.0, 1.0]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("level,n_positive,n_total\n1,1,2\n2,1,2\n3,1,3.5\n", "row 4, column n_total: not an integer"),
        ("level,n_positive,n_total\n1,1,2\nfast,1,2\n", "row 3, column level: not a number"),
        ("level,n_positive,n_total\n1,3,2\n2,1,2\n", "row 2, column n_positive: 3 is more than n_total"),
        ("level,n_positive,n_total\n1,1\n", "row 2, column n_total: missing value"),
        ("level,response\n1,1\n2,2\n", "row 3, column response: must be 0 or 1"),
        ("level,n_positive,n_total\n1,-1,2\n", "row 2, column n_positive: must not be negative"),
        ("rate,yes\n1,1\n", "row 1: header"),
        ("", "empty file"),
        ("level,response\n", "no data rows"),
        ("level,response\n4,1\n4,0\n", "two or more distinct levels"),
        ("level,n_positive,n_total\n10,3,5\n20,0,0\n", "trials at two or more distinct levels"),
        ("level,response,participant\n10,1,a\n10,0,\n20,1,b\n", "row 3, column participant: missing value"),
        ("level,response,block\n10,1,1\n20,0\n", "row 3, column block: missing value"),
        ("level,n_positive,n_total\n1,1,2\n2,1,1e30\n", "row 3, column n_total: '1e30' is more than"),
        ("level,response,level\n1,1,2\n", "row 1, column level: appears twice in the header .columns 1 and 3"),
        ("level,response,participant,participant\n1,1,a,b\n", "row 1, column participant: appears twice"),
    ],
)
def test_malformed_files_get_an_error_naming_the_cell(text, message):
    with pytest.raises(CurveFileError, match=message):
        parse(text)


def test_read_refuses_non_utf8(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_bytes(b"level,response\n\xff\xfe,1\n")
    with pytest.raises(CurveFileError, match="not UTF-8"):
        read(path)


def test_participants_come_back_per_data_row_and_blocks_are_not_people():
    data, who = parse_with_participants("participant,level,response\nb,3,1\na,1.5,1\na,1.5,0\nb,1.5,1\n")
    assert data.levels.tolist() == [1.5, 1.5, 3.0] and who == ["a", "b", "b"]
    assert data.n_total.tolist() == [2, 1, 1]
    assert parse_with_participants("block,level,response\n1,1.5,1\n2,3,0\n")[1] is None
    assert parse_with_participants("level,n_positive,n_total\n1,1,2\n2,2,2\n")[1] is None


def test_a_log_axis_fit_names_the_row_of_a_level_that_is_not_positive():
    text = "level,n_positive,n_total\n10,1,2\n0,1,2\n20,2,2\n"
    assert parse(text).n_levels == 3  # a linear axis takes 0
    with pytest.raises(CurveFileError, match="row 3, column level: a log axis .* needs levels above 0 .'0'."):
        parse(text, positive_levels=True)


def test_columns_the_fit_ignores_may_repeat():
    assert parse("level,response,note,note\n1,1,x,y\n2,0,x,y\n").n_trials == 2
