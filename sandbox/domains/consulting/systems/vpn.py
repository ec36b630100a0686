"""VPN: one VPN profile per person, in the region of their office site."""

from __future__ import annotations

from typing import Any

from passhat.sandbox.domain import System, ToolError, tool
from passhat.sandbox.domains.consulting import models as m
from passhat.sandbox.domains.consulting.systems.base import PersonAccounts, new_account, require


class Vpn(PersonAccounts):
    """VPN profiles; employees get one in their site's region, contractors none."""

    NAME = "vpn"

    TABLE = m.vpn_profiles
    KEY = "profile_id"
    STATUSES = ("active", "suspended", "revoked")
    WHAT = "VPN profile"

    @tool("lookup")
    async def get_vpn_profile(self, employee_id: str) -> dict[str, Any]:
        """An employee's VPN profile: region and status."""
        return self._get_record(employee_id)

    @tool("write")
    async def set_vpn_profile_status(self, employee_id: str, status: str) -> dict[str, Any]:
        """Set the VPN profile's status (active, suspended, revoked); offboarding turns it off, a leave
        suspends it where it can be suspended, a return or rehire makes it active."""
        return self._set_record_status("set_vpn_profile_status", employee_id, status)

    @tool("write")
    async def create_vpn_profile(self, employee_id: str, region: str) -> dict[str, Any]:
        """Create an employee's VPN profile in the region of their HRIS site (emea or amer); not for contractors."""
        require(employee_id=employee_id, region=region)
        employee = self._subject(employee_id)
        self._account_of(employee["employee_id"])
        if employee["employment_type"] == "contractor":
            raise ToolError("not_permitted", "contractors do not get VPN access")
        if region != m.SITES[employee["location"]]:
            raise ToolError("invalid_request", f"{employee['location']} is in region {m.SITES[employee['location']]}")
        if self.row(m.vpn_profiles, employee_id=employee["employee_id"]) is not None:
            raise ToolError("already_exists", f"{employee_id} already has a VPN profile")
        statement = new_account(
            m.vpn_profiles, "profile_id", "vpn", employee["employee_id"], region=region, status="active"
        )
        self._write(employee["employee_id"], "create_vpn_profile", region, statement)
        return {"employee_id": employee["employee_id"], "region": region, "status": "active"}


system = System("vpn", "VPN: remote-access profiles by region.", ("vpn_profiles",), Vpn)
