"""The consulting firm's IT & HR backend: thirty tables across eighteen systems (SQLAlchemy Core, one MetaData).

Each system owns its tables (see `systems/`): the agent must know where each fact lives. Every write of every
system also appends a row to `audit_log` (owned by the directory, the identity provider's system log).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import Boolean, Column, Integer, MetaData, String, Table

TODAY = "2026-06-01"
"""The sandbox's fixed today: offboarding, revocations and new rows are dated with it."""

metadata = MetaData()


def _table(name: str, key: str, *columns: Column[Any], autoincrement: bool = False) -> Table:
    """A table whose first column is its key: an integer row id for link tables, else a string id."""
    kind: Any = Integer if autoincrement else String
    return Table(name, metadata, Column(key, kind, primary_key=True, autoincrement=autoincrement), *columns)


def _text(name: str, *, nullable: bool = False, unique: bool = False, index: bool = False) -> Column[Any]:
    return Column(name, String, nullable=nullable, unique=unique, index=index)


def _employee() -> Column[Any]:
    return _text("employee_id", index=True)


# -- HRIS --------------------------------------------------------------------------------------------------
employees = _table(
    "employees",
    "employee_id",
    _text("first_name"),
    _text("last_name"),
    _text("work_email", unique=True),
    _text("role"),
    _text("department"),
    _text("employment_type"),  # employee | contractor
    _text("manager_id", nullable=True),
    _text("status"),  # pending_start | active | on_leave | terminated
    _text("start_date"),
    _text("end_date", nullable=True),
    _text("location"),
    Column("is_hr", Boolean, nullable=False),
)
employment_events = _table(
    "employment_events",
    "event_id",
    _employee(),
    _text("kind"),
    _text("detail"),
    _text("effective_date"),
    _text("recorded_by"),
    autoincrement=True,
)

# -- Directory / identity (and the audit log) ---------------------------------------------------------------
accounts = _table(
    "accounts",
    "account_id",
    _text("employee_id", unique=True),
    _text("username", unique=True),
    _text("display_name"),
    _text("status"),  # active | suspended | disabled
    _text("expires_on", nullable=True),
    Column("mfa_enrollment_required", Boolean, nullable=False),
)
mfa_devices = _table(
    "mfa_devices",
    "mfa_id",
    _employee(),
    _text("kind"),  # authenticator_app | hardware_key
    _text("label"),
    _text("status"),  # active | revoked
    autoincrement=True,
)
audit_log = _table(
    "audit_log",
    "audit_id",
    _text("actor_id"),
    _employee(),
    _text("system"),
    _text("action"),
    _text("target"),
    _text("created_at"),
    autoincrement=True,
)

# -- Email, chat, issue tracker, VPN: one account row per person ----------------------------------------------
mailboxes = _table(
    "mailboxes", "mailbox_id", _employee(), _text("address", unique=True), _text("aliases"), _text("status")
)
chat_accounts = _table("chat_accounts", "chat_id", _employee(), _text("handle"), _text("display_name"), _text("status"))
tracker_accounts = _table("tracker_accounts", "tracker_id", _employee(), _text("display_name"), _text("status"))
vpn_profiles = _table("vpn_profiles", "profile_id", _employee(), _text("region"), _text("status"))

# -- Groups / SSO and the approvals of access requests ---------------------------------------------------------
groups = _table("groups", "group_id", _text("name"), _text("kind"), _text("project_id", nullable=True))
group_memberships = _table(
    "group_memberships",
    "membership_id",
    _text("group_id", index=True),
    _employee(),
    _text("added_at"),
    autoincrement=True,
)
access_requests = _table(
    "access_requests",
    "request_id",
    _employee(),
    _text("project_id"),
    _text("requested_by"),
    _text("status"),  # pending | approved | fulfilled
    _text("created_at"),
)
approvals = _table(
    "approvals",
    "approval_id",
    _text("request_id", index=True),
    _text("approver_id"),
    _text("decision"),  # approved | rejected
    _text("decided_at"),
    autoincrement=True,
)

# -- Device management ---------------------------------------------------------------------------------------
devices = _table(
    "devices",
    "device_id",
    _text("model"),
    _text("kind"),  # laptop | phone
    _text("status"),  # available | reserved | assigned | repair
    _text("reserved_for", nullable=True),
)
device_assignments = _table(
    "device_assignments",
    "assignment_id",
    _text("device_id", index=True),
    _employee(),
    _text("assigned_at"),
    _text("returned_at", nullable=True),
    _text("status"),  # active | returned
    autoincrement=True,
)

# -- Code hosting ---------------------------------------------------------------------------------------------
repo_access = _table(
    "repo_access", "access_id", _employee(), _text("org"), _text("permission"), _text("status"), autoincrement=True
)

# -- Timesheets -----------------------------------------------------------------------------------------------
timesheet_projects = _table(
    "timesheet_projects", "code", _text("project_id", index=True), _text("name"), _text("status")
)
timesheet_entries = _table(
    "timesheet_entries",
    "entry_id",
    _employee(),
    _text("code", index=True),
    _text("week"),
    Column("hours", Integer, nullable=False),
    _text("status"),  # open | submitted | closed
    autoincrement=True,
)

# -- Expenses, payroll ----------------------------------------------------------------------------------------
expense_profiles = _table(
    "expense_profiles", "profile_id", _employee(), _text("cost_center"), _text("approver_id"), _text("status")
)
payroll_records = _table(
    "payroll_records",
    "payroll_id",
    _employee(),
    _text("legal_name"),
    Column("salary", Integer, nullable=False),
    _text("cost_center"),
    _text("status"),  # active | unpaid_leave | final
    _text("final_pay_date", nullable=True),
)

# -- Badge access ----------------------------------------------------------------------------------------------
badges = _table(
    "badges",
    "badge_id",
    _employee(),
    _text("site"),
    _text("printed_name"),
    _text("status"),
    _text("expires_on", nullable=True),
)

# -- Learning ---------------------------------------------------------------------------------------------------
courses = _table("courses", "course_id", _text("title"), _text("audience"))  # audience: everyone | a role
enrollments = _table(
    "enrollments",
    "enrollment_id",
    _employee(),
    _text("course_id"),
    _text("status"),
    _text("enrolled_at"),
    autoincrement=True,
)

# -- CRM, staffing ---------------------------------------------------------------------------------------------
client_accounts = _table("client_accounts", "client_id", _text("name"), _text("industry"), _text("status"))
projects = _table(
    "projects", "project_id", _text("client_id", index=True), _text("name"), _text("lead_id"), _text("status")
)
staffing_assignments = _table(
    "staffing_assignments",
    "assignment_id",
    _employee(),
    _text("project_id", index=True),
    _text("start_date"),
    _text("end_date", nullable=True),
    _text("status"),  # active | ended
    autoincrement=True,
)

# -- Document storage --------------------------------------------------------------------------------------------
shares = _table("shares", "share_id", _text("client_id", index=True), _text("name"))
share_permissions = _table(
    "share_permissions",
    "permission_id",
    _text("share_id", index=True),
    _employee(),
    _text("level"),  # read | edit
    _text("status"),  # active | revoked
    autoincrement=True,
)

# -- License manager ----------------------------------------------------------------------------------------------
license_pools = _table(
    "license_pools",
    "pool_id",
    _text("product"),
    Column("total_seats", Integer, nullable=False),
    _text("eligible_roles"),
)
license_seats = _table(
    "license_seats",
    "seat_id",
    _text("pool_id", index=True),
    _employee(),
    _text("assigned_at"),
    _text("status"),
    autoincrement=True,
)


# -- The firm's provisioning rules (the policy states them; tools enforce them) --------------------------------------
ROLES: Mapping[str, Mapping[str, Any]] = {
    "software_engineer": {
        "title": "Software Engineer",
        "engineering": True,
        "pool": "lic-ide-pro",
        "product": "IDE Pro",
    },
    "data_engineer": {"title": "Data Engineer", "engineering": True, "pool": "lic-notebooks", "product": "Notebooks"},
    "consultant": {"title": "Consultant", "engineering": False, "pool": "lic-slides-pro", "product": "Slides Pro"},
    "analyst": {"title": "Analyst", "engineering": False, "pool": "lic-bi-desktop", "product": "BI Desktop"},
    "designer": {"title": "Designer", "engineering": False, "pool": "lic-design-suite", "product": "Design Suite"},
    "hr_partner": {"title": "HR Partner", "engineering": False, "pool": "lic-hr-suite", "product": "HR Suite"},
}
"""Each role: its title, whether it is an engineering role (code hosting), and its role license pool."""

DEPARTMENTS: Mapping[str, str] = {
    "engineering": "CC-100",
    "strategy": "CC-200",
    "design": "CC-300",
    "data": "CC-400",
    "people": "CC-900",
}
"""Each department and its cost center."""

SITES: Mapping[str, str] = {"london": "emea", "berlin": "emea", "new-york": "amer", "toronto": "amer"}
"""Each office site and its VPN region."""

EVERYONE_GROUP = "grp-all-staff"
EVERYONE_POOL = "lic-office"
SECURITY_COURSE = "crs-security-101"
CODE_ORG = "firm-engineering"
STANDARD_LAPTOP = "ThinkPad T14"


def role_group(role: str) -> str:
    """The SSO group of a role."""
    return f"grp-role-{role.replace('_', '-')}"


def department_group(department: str) -> str:
    """The SSO group of a department."""
    return f"grp-dept-{department}"


def role_course(role: str) -> str:
    """The required onboarding course of a role."""
    return f"crs-{role.replace('_', '-')}-basics"


def project_group(project_id: str) -> str:
    """The SSO group of a client project."""
    return f"grp-{project_id.lower()}"
