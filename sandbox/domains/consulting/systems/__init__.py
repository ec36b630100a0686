"""The consulting firm's eighteen systems, each its own module with its tables and tools."""

from passhat.sandbox.domains.consulting.systems import (
    badges,
    chat,
    code_hosting,
    crm,
    devices,
    directory,
    documents,
    email,
    expenses,
    groups,
    hris,
    learning,
    licenses,
    payroll,
    staffing,
    timesheets,
    tracker,
    vpn,
)
from passhat.sandbox.domains.consulting.systems.base import ERRORS

SYSTEMS = tuple(
    module.system
    for module in (
        hris,
        directory,
        email,
        groups,
        devices,
        vpn,
        chat,
        code_hosting,
        tracker,
        timesheets,
        expenses,
        payroll,
        badges,
        learning,
        crm,
        staffing,
        documents,
        licenses,
    )
)
"""The eighteen systems, in the order the brief lists them."""

__all__ = ["ERRORS", "SYSTEMS"]
