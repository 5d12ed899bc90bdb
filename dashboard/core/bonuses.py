"""Bonuses: the study file's rule (``payments.bonus``) applied to one participant's quality report.

Pure Python (no Django). Amounts are ``Decimal`` rounded to the cent, in the study's currency, as Prolific's bulk
bonus takes them (``<participant_id>,<amount>`` per line, ``4.25`` meaning £4.25: docs.prolific.com, "Set up
bonuses"). A bonus is only ever paid to a session the researcher approved; the caller decides that.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

CENT = Decimal("0.01")


@dataclass(frozen=True)
class BonusRule:
    completed: Decimal = Decimal(0)
    per_attention_check_passed: Decimal = Decimal(0)
    all_attention_checks_passed: Decimal = Decimal(0)
    max: Decimal | None = None

    @property
    def empty(self) -> bool:
        return not (self.completed or self.per_attention_check_passed or self.all_attention_checks_passed)


def _money(value: Any) -> Decimal:
    return Decimal(str(value)).quantize(CENT, rounding=ROUND_HALF_UP)


def rule_from_spec(spec: Mapping[str, Any]) -> BonusRule:
    """The study's bonus rule (all zero when the study file has none)."""
    bonus = (spec.get("payments") or {}).get("bonus") or {}
    return BonusRule(completed=_money(bonus.get("completed", 0)),
                     per_attention_check_passed=_money(bonus.get("per_attention_check_passed", 0)),
                     all_attention_checks_passed=_money(bonus.get("all_attention_checks_passed", 0)),
                     max=_money(bonus["max"]) if bonus.get("max") is not None else None)


def amount(rule: BonusRule, quality: Mapping[str, Any]) -> Decimal:
    """The bonus of one completed session from its quality report (``dashboard.core.quality.Quality.as_dict()``)."""
    if quality.get("state") != "completed":
        return Decimal("0.00")
    answered = int(quality.get("attention_answered") or 0)
    passed = answered - int(quality.get("attention_failed") or 0)
    total = rule.completed + rule.per_attention_check_passed * passed
    if answered and passed == answered:
        total += rule.all_attention_checks_passed
    if rule.max is not None:
        total = min(total, rule.max)
    return total.quantize(CENT)
