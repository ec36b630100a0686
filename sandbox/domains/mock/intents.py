"""What each mock task type's intent holds, and where each value lives (for tickets that recorded none).

Values a customer states are columns, enumerations or free text; the rest (expected amounts, dates after the
change, the ids of rows the change touches) are derived by the task type from those and the starting state.
"""

from __future__ import annotations

from passhat.sandbox.domain import IntentField, derived, free_text, in_column, in_enum

INTENT_FIELDS: dict[str, dict[str, IntentField]] = {
    "renew_loan": {
        "email": in_column("members.email"),
        "member_id": in_column("members.member_id"),
        "loans[].loan_id": in_column("loans.loan_id"),
        "loans[].title": in_enum(
            "title", ("Beloved", "Dune", "Emma", "Kindred", "Middlemarch", "Solaris", "Ulysses", "Walden")
        ),
        "loans[].due": derived(type="date"),
        "loans[].weeks": free_text(type="int"),
        "renewals[]": derived(type="int"),
    },
    "renew_several_loans": {
        "email": in_column("members.email"),
        "member_id": in_column("members.member_id"),
        "loans[].loan_id": in_column("loans.loan_id"),
        "loans[].title": in_enum(
            "title", ("Beloved", "Dune", "Emma", "Kindred", "Middlemarch", "Solaris", "Ulysses", "Walden")
        ),
        "loans[].due": derived(type="date"),
        "loans[].weeks": free_text(type="int"),
        "renewals[]": derived(type="int"),
    },
    "loan_inquiry": {
        "email": in_column("members.email"),
        "loan_id": derived(),
        "title": in_enum(
            "title", ("Beloved", "Dune", "Emma", "Kindred", "Middlemarch", "Solaris", "Ulysses", "Walden")
        ),
        "due": derived(type="date"),
    },
}
