"""The item sample a limit and a seed pick: the CLI and the Evaluate tab share it."""

from probes.core.registry import get_benchmark
from probes.core.selection import select_items


def items():
    return get_benchmark("blind/touching-circles").items()


def test_no_limit_or_a_limit_past_the_end_takes_every_item_in_order():
    every = items()
    assert select_items(every, None, 0) == every
    assert select_items(every, len(every) + 5, 3) == every


def test_a_limit_samples_in_benchmark_order_and_the_seed_decides_which():
    every = items()
    position = {item.id: i for i, item in enumerate(every)}
    first = select_items(every, 12, 0)
    assert len(first) == 12 and len({i.id for i in first}) == 12
    assert [position[i.id] for i in first] == sorted(position[i.id] for i in first)
    assert [i.id for i in select_items(every, 12, 0)] == [i.id for i in first]
    assert [i.id for i in select_items(every, 12, 1)] != [i.id for i in first]


def test_a_larger_limit_keeps_the_smaller_sample():
    every = items()
    small = {i.id for i in select_items(every, 12, 7)}
    large = {i.id for i in select_items(every, 40, 7)}
    assert small < large and len(large) == 40


def test_the_command_line_uses_the_same_selection():
    from probes.cli import run_command
    from probes.core import selection
    from probes.files import export, set_spec

    # run, generate (and the Stimulus lab's export through generated_set) and a set's description: one sampler
    assert run_command.draw_set is export.draw_set is set_spec.draw_set is selection.draw_set


def test_the_one_sampler_is_the_benchmark_as_its_parameters_build_it_sampled_with_the_seed():
    from probes.core.selection import draw_set

    benchmark, drawn = draw_set("blind/nested-squares", {"depth": ["3"]}, 12, 7)
    assert benchmark.id == "blind/nested-squares"
    every = get_benchmark("blind/nested-squares", params={"depth": ["3"]}).items()
    assert [i.id for i in drawn] == [i.id for i in select_items(every, 12, 7)]
    assert {i.params["seed"] for i in drawn} == {0}  # the seed picks the sample, not the design
