"""The consulting firm's seed: staff in five departments, their accounts in every system, clients and projects.

Deterministic in (seed, size). Active staff are provisioned the way the policy says (so a task's expected state
follows from the rules); new hires wait with only an HRIS record and a reserved laptop; leavers have every
account disabled; some consultants hold approved access requests to client projects they are not yet on.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from sqlalchemy import Connection, Table, insert

from passhat.sandbox.domain import DomainError
from passhat.sandbox.domains.consulting import models as m

SIZES = {"small": (90, 4), "default": (420, 10)}
"""Staff and clients per seed size."""

FIRST = (
    "Ana",
    "Ben",
    "Chloe",
    "Dev",
    "Elif",
    "Femi",
    "Greta",
    "Hugo",
    "Ines",
    "Jonas",
    "Kira",
    "Luca",
    "Maya",
    "Nils",
    "Omar",
    "Priya",
)
LAST = (
    "Lopez",
    "Berg",
    "Chen",
    "Okafor",
    "Novak",
    "Silva",
    "Haddad",
    "Moreau",
    "Kowalski",
    "Tanaka",
    "Reyes",
    "Fischer",
    "Ivanova",
    "Byrne",
)
CLIENTS = (
    "Northwind",
    "Contoso",
    "Fabrikam",
    "Globex",
    "Initech",
    "Umbrella",
    "Tyrell",
    "Soylent",
    "Hooli",
    "Vandelay",
)
INDUSTRIES = ("retail", "energy", "banking", "logistics", "health")
ROLE_BY_DEPARTMENT = {
    "engineering": ("software_engineer", "software_engineer", "data_engineer"),
    "strategy": ("consultant", "consultant", "analyst"),
    "design": ("designer",),
    "data": ("data_engineer", "analyst"),
    "people": ("hr_partner",),
}


def employee_id(number: int) -> str:
    """An employee id with a check digit (E + four digits + check): a mistyped id matches nobody."""
    digits = f"{number:04d}"
    check = sum((index + 2) * int(d) for index, d in enumerate(digits)) % 10
    return f"E{digits}{check}"


class _Rows:
    """Rows per table, inserted at the end; link-table ids are assigned by SQLite."""

    def __init__(self) -> None:
        self.tables: dict[str, list[dict[str, Any]]] = {}

    def add(self, table: Table, **values: Any) -> dict[str, Any]:
        self.tables.setdefault(table.name, []).append(values)
        return values

    def flush(self, connection: Connection) -> None:
        for table in m.metadata.sorted_tables:
            if self.tables.get(table.name):
                connection.execute(insert(table), self.tables[table.name])


def _people(rng: random.Random, count: int) -> Iterator[dict[str, Any]]:
    """HRIS rows: per department, two managers first, then staff reporting to them."""
    departments = list(m.DEPARTMENTS)
    managers: dict[str, list[str]] = {d: [] for d in departments}
    emails: set[str] = set()
    for index in range(count):
        department = departments[index % len(departments)] if index < 2 * len(departments) else rng.choice(departments)
        first, last = rng.choice(FIRST), rng.choice(LAST)
        base = f"{first}.{last}".lower()
        email = next(
            f"{base}{n or ''}@firm.example" for n in range(count) if f"{base}{n or ''}@firm.example" not in emails
        )
        emails.add(email)
        number = employee_id(1000 + index)
        is_manager = len(managers[department]) < 2
        status = (
            "active" if is_manager else rng.choices(("active", "pending_start", "terminated"), (0.76, 0.14, 0.1))[0]
        )
        contractor = (
            not is_manager and department != "people" and rng.random() < (0.5 if status == "pending_start" else 0.15)
        )
        end = None
        if contractor:
            end = f"2026-{rng.randint(7, 12):02d}-{rng.randint(1, 28):02d}"
        if status == "terminated":
            end = f"2026-0{rng.randint(1, 4)}-{rng.randint(10, 28)}"
        start = "2026-06-15" if status == "pending_start" else f"20{rng.randint(18, 25)}-{rng.randint(1, 12):02d}-01"
        yield {
            "employee_id": number,
            "first_name": first,
            "last_name": last,
            "work_email": email,
            "role": rng.choice(ROLE_BY_DEPARTMENT[department]),
            "department": department,
            "employment_type": "contractor" if contractor else "employee",
            "manager_id": None if is_manager else rng.choice(managers[department]),
            "status": status,
            "start_date": start,
            "end_date": end,
            "location": rng.choice(list(m.SITES)),
            "is_hr": department == "people",
        }
        if is_manager:
            managers[department].append(number)


def _catalogue(rows: _Rows, clients: int, staff: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Groups, courses, license pools, clients, projects (led by active consultants), shares and time codes."""
    rows.add(m.groups, group_id=m.EVERYONE_GROUP, name="All staff", kind="everyone", project_id=None)
    for role, spec in m.ROLES.items():
        rows.add(m.groups, group_id=m.role_group(role), name=f"{spec['title']}s", kind="role", project_id=None)
        rows.add(m.courses, course_id=m.role_course(role), title=f"{spec['title']} basics", audience=role)
        rows.add(
            m.license_pools, pool_id=spec["pool"], product=spec["product"], total_seats=len(staff), eligible_roles=role
        )
    for department in m.DEPARTMENTS:
        rows.add(
            m.groups,
            group_id=m.department_group(department),
            name=f"Department {department}",
            kind="department",
            project_id=None,
        )
    rows.add(m.courses, course_id=m.SECURITY_COURSE, title="Security awareness", audience="everyone")
    rows.add(m.courses, course_id="crs-ethics", title="Business ethics", audience="everyone")
    rows.add(
        m.license_pools, pool_id=m.EVERYONE_POOL, product="Office", total_seats=len(staff) + 10, eligible_roles="*"
    )
    leads = [p["employee_id"] for p in staff if p["status"] == "active" and p["department"] == "strategy"]
    projects: list[dict[str, Any]] = []
    for index in range(clients):
        client = f"cl-{CLIENTS[index].lower()}"
        rows.add(
            m.client_accounts,
            client_id=client,
            name=CLIENTS[index],
            industry=INDUSTRIES[index % len(INDUSTRIES)],
            status="active",
        )
        rows.add(
            m.shares, share_id=f"shr-{CLIENTS[index].lower()}", client_id=client, name=f"{CLIENTS[index]} engagement"
        )
        for number in (1, 2):
            project_id = f"PRJ-{CLIENTS[index][:3].upper()}{number}"
            project = rows.add(
                m.projects,
                project_id=project_id,
                client_id=client,
                name=f"{CLIENTS[index]} {('transformation', 'platform')[number - 1]}",
                lead_id=leads[(2 * index + number) % len(leads)],
                status="active",
            )
            projects.append(project)
            rows.add(
                m.groups,
                group_id=m.project_group(project_id),
                name=f"{project['name']} team",
                kind="project",
                project_id=project_id,
            )
            rows.add(
                m.timesheet_projects,
                code=f"TS-{project_id}",
                project_id=project_id,
                name=project["name"],
                status="open",
            )
    return projects


def _device(
    rows: _Rows,
    devices: list[str],
    kind: str,
    status: str,
    reserved_for: str | None = None,
    model: str = m.STANDARD_LAPTOP,
) -> str:
    device_id = f"{'LT' if kind == 'laptop' else 'PH'}-{len(devices) + 1:04d}"
    devices.append(device_id)
    rows.add(
        m.devices,
        device_id=device_id,
        model=model if kind == "laptop" else "Pixel 8",
        kind=kind,
        status=status,
        reserved_for=reserved_for,
    )
    return device_id


def _provision(rows: _Rows, rng: random.Random, person: dict[str, Any], devices: list[str], username: str) -> None:
    """An active (or, with everything disabled, a terminated) person's accounts in every system."""
    employee = person["employee_id"]
    active = person["status"] == "active"
    contractor = person["employment_type"] == "contractor"
    name = f"{person['first_name']} {person['last_name']}"
    on = "active" if active else "disabled"
    rows.add(
        m.accounts,
        account_id=f"acc-{employee}",
        employee_id=employee,
        username=username,
        display_name=name,
        status=on,
        expires_on=person["end_date"] if contractor else None,
        mfa_enrollment_required=False,
    )
    rows.add(
        m.mfa_devices,
        employee_id=employee,
        kind="authenticator_app",
        label=rng.choice(("iPhone", "Pixel", "Galaxy")),
        status="active" if active else "revoked",
    )
    if rng.random() < 0.6:
        rows.add(
            m.mfa_devices,
            employee_id=employee,
            kind="hardware_key",
            label="YubiKey",
            status="active" if active else "revoked",
        )
    rows.add(
        m.mailboxes,
        mailbox_id=f"mbx-{employee}",
        employee_id=employee,
        address=person["work_email"],
        aliases="",
        status=on,
    )
    rows.add(
        m.chat_accounts,
        chat_id=f"chat-{employee}",
        employee_id=employee,
        handle=username,
        display_name=name,
        status="active" if active else "deactivated",
    )
    rows.add(
        m.tracker_accounts,
        tracker_id=f"trk-{employee}",
        employee_id=employee,
        display_name=name,
        status="active" if active else "deactivated",
    )
    rows.add(
        m.badges,
        badge_id=f"bdg-{employee}",
        employee_id=employee,
        site=person["location"],
        printed_name=name,
        status=on,
        expires_on=person["end_date"] if contractor else None,
    )
    engineering = bool(m.ROLES[person["role"]]["engineering"])
    if not contractor:
        rows.add(
            m.vpn_profiles,
            profile_id=f"vpn-{employee}",
            employee_id=employee,
            region=m.SITES[person["location"]],
            status="active" if active else "revoked",
        )
        rows.add(
            m.expense_profiles,
            profile_id=f"exp-{employee}",
            employee_id=employee,
            cost_center=m.DEPARTMENTS[person["department"]],
            approver_id=person["manager_id"] or employee,
            status="active" if active else "closed",
        )
        rows.add(
            m.payroll_records,
            payroll_id=f"pay-{employee}",
            employee_id=employee,
            legal_name=name,
            salary=rng.randrange(52000, 190000, 500),
            cost_center=m.DEPARTMENTS[person["department"]],
            status="active" if active else "final",
            final_pay_date=None if active else person["end_date"],
        )
    for course in (m.SECURITY_COURSE, m.role_course(person["role"])):
        rows.add(
            m.enrollments, employee_id=employee, course_id=course, status="completed", enrolled_at=person["start_date"]
        )
    if engineering:
        rows.add(
            m.repo_access,
            employee_id=employee,
            org=m.CODE_ORG,
            permission="write",
            status="active" if active else "revoked",
        )
    if not active:
        return
    groups = [m.EVERYONE_GROUP, m.role_group(person["role"])] + (
        [] if contractor else [m.department_group(person["department"])]
    )
    for group in groups:
        rows.add(m.group_memberships, group_id=group, employee_id=employee, added_at=person["start_date"])
    pools = [m.EVERYONE_POOL] + ([] if contractor else [str(m.ROLES[person["role"]]["pool"])])
    if rng.random() < 0.35:
        extra = rng.choice([str(spec["pool"]) for spec in m.ROLES.values()])
        pools += [extra] if extra not in pools else []
    for pool in pools:
        rows.add(m.license_seats, pool_id=pool, employee_id=employee, assigned_at=person["start_date"], status="active")
    for kind in ("laptop",) + (("phone",) if rng.random() < 0.3 else ()):
        device = _device(rows, devices, kind, "assigned")
        rows.add(
            m.device_assignments,
            device_id=device,
            employee_id=employee,
            assigned_at=person["start_date"],
            returned_at=None,
            status="active",
        )


def _staff_on(rows: _Rows, person: dict[str, Any], project: dict[str, Any]) -> None:
    employee = person["employee_id"]
    rows.add(
        m.staffing_assignments,
        employee_id=employee,
        project_id=project["project_id"],
        start_date="2026-03-02",
        end_date=None,
        status="active",
    )
    rows.add(
        m.group_memberships,
        group_id=m.project_group(project["project_id"]),
        employee_id=employee,
        added_at="2026-03-02",
    )
    share = f"shr-{project['client_id'][3:]}"
    if not any(
        p["share_id"] == share and p["employee_id"] == employee for p in rows.tables.get("share_permissions", [])
    ):
        rows.add(m.share_permissions, share_id=share, employee_id=employee, level="edit", status="active")
    code = f"TS-{project['project_id']}"
    rows.add(m.timesheet_entries, employee_id=employee, code=code, week="2026-05-25", hours=40, status="submitted")
    rows.add(m.timesheet_entries, employee_id=employee, code=code, week=m.TODAY, hours=0, status="open")


def seed(connection: Connection, seed: int = 0, size: str = "small") -> None:
    """Insert one seeded firm."""
    if size not in SIZES:
        raise DomainError(f"no seed size {size!r} for the consulting domain; sizes: {', '.join(SIZES)}")
    staff_count, client_count = SIZES[size]
    rng = random.Random(f"consulting/{seed}/{size}")
    rows = _Rows()
    staff = [rows.add(m.employees, **person) for person in _people(rng, staff_count)]
    recorder = next(p["employee_id"] for p in staff if p["is_hr"])
    for person in staff:
        rows.add(
            m.employment_events,
            employee_id=person["employee_id"],
            kind="hire",
            detail=person["role"],
            effective_date=person["start_date"],
            recorded_by=recorder,
        )
    projects = _catalogue(rows, client_count, staff)
    devices: list[str] = []
    usernames: set[str] = set()
    for person in staff:
        if person["status"] in ("active", "terminated"):
            base = f"{person['first_name'][0]}{person['last_name']}".lower()
            username = next(f"{base}{n or ''}" for n in range(len(staff)) if f"{base}{n or ''}" not in usernames)
            usernames.add(username)
            _provision(rows, rng, person, devices, username)
        if person["status"] in ("pending_start", "terminated"):
            _device(rows, devices, "laptop", "reserved", person["employee_id"])
        billable = person["status"] == "active" and person["department"] in (
            "engineering",
            "strategy",
            "design",
            "data",
        )
        if not billable:
            continue
        clients = rng.sample(projects, rng.choice((0, 1, 1, 2)))
        for project in clients:
            if not any(project["client_id"] == other["client_id"] for other in clients if other is not project):
                _staff_on(rows, person, project)
        staffed = {p["project_id"] for p in clients}
        if rng.random() < 0.4:
            wanted = rng.choice(
                [p for p in projects if p["project_id"] not in staffed and p["lead_id"] != person["employee_id"]]
            )
            request_id = f"REQ-{len(rows.tables.get('access_requests', [])) + 1:04d}"
            approved = rng.random() < 0.8
            rows.add(
                m.access_requests,
                request_id=request_id,
                employee_id=person["employee_id"],
                project_id=wanted["project_id"],
                requested_by=person["manager_id"] or person["employee_id"],
                status="approved" if approved else "pending",
                created_at="2026-05-20",
            )
            if approved:
                rows.add(
                    m.approvals,
                    request_id=request_id,
                    approver_id=wanted["lead_id"],
                    decision="approved",
                    decided_at="2026-05-22",
                )
    for index in range(max(8, staff_count // 10)):
        _device(rows, devices, "laptop", "available", model=m.STANDARD_LAPTOP if index % 4 else "MacBook Pro 14")
    rows.flush(connection)
