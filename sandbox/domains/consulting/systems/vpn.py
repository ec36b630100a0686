"""VPN: one VPN profile per person, in the region of their office site."""

from __future__ import annotations

from typing import Any

from passhat.sandbox.domain import System, ToolError, tool
from passhat.sandbox.domains.consulting import models as m
from passhat.sandbox.domains.consulting.systems.base import account_tools, new_account, require

VpnTools = account_tools("vpn_profile", m.vpn_profiles, "profile_id", ("active", "suspended", "revoked"), "VPN profile")


class Vpn(VpnTools):
    """VPN profiles; employees get one in their site's region, contractors none."""

    NAME = "vpn"

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
        if self._row(m.vpn_profiles, employee_id=employee["employee_id"]) is not None:
            raise ToolError("already_exists", f"{employee_id} already has a VPN profile")
        statement = new_account(m.vpn_profiles, "profile_id", "vpn", employee["employee_id"], region=region, status="active")
        self._write(employee["employee_id"], "create_vpn_profile", region, statement)
        return {"employee_id": employee["employee_id"], "region": region, "status": "active"}


system = System("vpn", "VPN: remote-access profiles by region.", ("vpn_profiles",), Vpn)
