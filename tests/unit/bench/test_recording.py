from bench.recording import ratio


def test_a_ratio_to_a_row_that_measured_no_cpu_is_a_dash_not_a_crash() -> None:
    # A process's CPU time moves in clock ticks: a --quick run can measure none for a light row.
    assert ratio(0.004, 0.0) == "-"
    assert ratio(0.0, 0.0) == "-"


def test_a_ratio_is_two_decimals() -> None:
    assert ratio(0.003, 0.002) == "1.50"
