"""The typed environment readers fail loudly and never guess."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from config.env import env_bool, env_choice, env_float, env_float_list, env_int, env_list


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("1", True), ("yes", True), ("On", True), ("0", False), ("false", False), ("off", False)],
)
def test_env_bool_reads_the_usual_spellings(monkeypatch, raw, expected):
    monkeypatch.setenv("FLAG", raw)
    assert env_bool("FLAG", not expected) is expected


@pytest.mark.parametrize("default", [True, False])
def test_an_empty_or_missing_boolean_keeps_the_default(monkeypatch, default):
    monkeypatch.delenv("FLAG", raising=False)
    assert env_bool("FLAG", default) is default
    monkeypatch.setenv("FLAG", "")
    assert env_bool("FLAG", default) is default


def test_a_misspelt_boolean_is_an_error(monkeypatch):
    monkeypatch.setenv("FLAG", "yse")
    with pytest.raises(ImproperlyConfigured, match="FLAG"):
        env_bool("FLAG")


def test_int_list_and_choice(monkeypatch):
    monkeypatch.setenv("N", "12")
    assert env_int("N", 1) == 12
    monkeypatch.setenv("N", "twelve")
    with pytest.raises(ImproperlyConfigured, match="N must be an integer"):
        env_int("N", 1)
    monkeypatch.setenv("HOSTS", "a.example, b.example,")
    assert env_list("HOSTS", []) == ["a.example", "b.example"]
    monkeypatch.setenv("MODE", "sometimes")
    with pytest.raises(ImproperlyConfigured, match="MODE must be one of"):
        env_choice("MODE", "always", {"always", "never"})


@pytest.mark.parametrize("raw", ["nan", "inf", "-1", "ten"])
def test_env_float_refuses_what_is_not_a_finite_number_of_at_least_0(monkeypatch, raw):
    monkeypatch.setenv("SECONDS", raw)
    with pytest.raises(ImproperlyConfigured):
        env_float("SECONDS", 1.0)


def test_env_float_reads_a_number_and_keeps_the_default_when_empty(monkeypatch):
    monkeypatch.setenv("SECONDS", "2.5")
    assert env_float("SECONDS", 1.0) == 2.5
    monkeypatch.setenv("SECONDS", " ")
    assert env_float("SECONDS", 1.0) == 1.0


@pytest.mark.parametrize("raw", ["10,,5", "10,nan", "10,-1"])
def test_env_float_list_refuses_any_item_that_is_not_a_number_of_at_least_0(monkeypatch, raw):
    monkeypatch.setenv("SCHEDULE", raw)
    with pytest.raises(ImproperlyConfigured):
        env_float_list("SCHEDULE", [1.0])


def test_env_float_list_reads_comma_separated_numbers(monkeypatch):
    monkeypatch.setenv("SCHEDULE", "10, 60,300")
    assert env_float_list("SCHEDULE", [1.0]) == [10.0, 60.0, 300.0]
