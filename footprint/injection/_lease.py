"""Leases: a tool pushes an injection into the next evaluation(s) (spec §1.4).

A ``require-instruction{instruction_id, delivery_lease}`` tool effect is
granted as a :class:`Lease` or refused with a reason. At each Evaluate
pass the live leases name the ids admitted without their trigger
(``InjectionContext.lease_active_ids``); dead ones are pruned and never
revive.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias

from footprint._errors import did_you_mean
from footprint.injection._types import Injection

__all__ = [
    "DeliveryLease",
    "Lease",
    "LeaseRefusal",
    "grant_lease",
    "lease_active_ids",
    "lease_tenant",
]

DeliveryLease: TypeAlias = Literal["next-call", "until-skill-exit"]
_LEASES: tuple[DeliveryLease, ...] = ("next-call", "until-skill-exit")


@dataclass(frozen=True, slots=True, kw_only=True)
class Lease:
    """A granted push: which injection, for how long, whose tenure, granted when."""

    instruction_id: str
    delivery_lease: DeliveryLease
    skill_id: str | None
    iteration: int


@dataclass(frozen=True, slots=True, kw_only=True)
class LeaseRefusal:
    """Why a ``require-instruction`` effect was not granted, with a note for the record."""

    instruction_id: str
    reason: Literal["unknown-id", "tool-only-target", "bad-delivery-lease"]
    note: str


def lease_tenant(cursor: str | None, activated_ids: Sequence[str]) -> str | None:
    """The tenure a lease binds to: the advanced cursor, else the last activated id."""
    if cursor is not None:
        return cursor
    return activated_ids[-1] if activated_ids else None


def grant_lease(
    *,
    instruction_id: str,
    delivery_lease: str,
    injections: Iterable[Injection],
    tenant: str | None,
    iteration: int,
) -> Lease | LeaseRefusal:
    """Grant the lease, or refuse it (unknown id; a ``tool-only`` skill target)."""
    if delivery_lease not in _LEASES:
        return LeaseRefusal(
            instruction_id=instruction_id, reason="bad-delivery-lease",
            note=f"delivery_lease {delivery_lease!r} is not 'next-call' or "
                 f"'until-skill-exit'; nothing was pushed.",
        )
    by_id = {inj.id: inj for inj in injections}
    target = by_id.get(instruction_id)
    if target is None:
        return LeaseRefusal(
            instruction_id=instruction_id, reason="unknown-id",
            note=f"no injection has id {instruction_id!r}"
                 f"{did_you_mean(instruction_id, by_id)}; nothing was pushed.",
        )
    if target.flavor == "skill" and target.metadata.get("surface_mode") == "tool-only":
        return LeaseRefusal(
            instruction_id=instruction_id, reason="tool-only-target",
            note=f"skill {instruction_id!r} is tool-only: its body reaches the model "
                 f"only through read_skill, so a lease would deliver nothing.",
        )
    return Lease(
        instruction_id=instruction_id,
        delivery_lease=delivery_lease,
        skill_id=tenant,
        iteration=iteration,
    )


def _is_live(lease: Lease, iteration: int, tenant: str | None) -> bool:
    if lease.delivery_lease == "next-call":
        return lease.iteration + 1 == iteration
    return lease.skill_id == tenant


def _survives(lease: Lease, iteration: int, live: bool) -> bool:
    """Whether a lease may still serve a later pass after this one."""
    if lease.delivery_lease == "next-call":
        return iteration < lease.iteration + 1
    return live


def lease_active_ids(
    leases: Iterable[Lease], iteration: int, tenant: str | None
) -> tuple[tuple[str, ...], tuple[Lease, ...]]:
    """At Evaluate pass ``iteration``: the live ids (deduped, in order) and the surviving leases.

    ``next-call`` is live only on the pass right after its grant and is then
    spent; ``until-skill-exit`` is live while its tenant holds and dies the
    first pass it does not.
    """
    live_ids: dict[str, None] = {}
    surviving: list[Lease] = []
    for lease in leases:
        live = _is_live(lease, iteration, tenant)
        if live:
            live_ids.setdefault(lease.instruction_id, None)
        if _survives(lease, iteration, live):
            surviving.append(lease)
    return tuple(live_ids), tuple(surviving)
