"""Learning: courses and enrollments (security training for everyone, a basics course per role)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import insert

from passhat.sandbox.domain import System, ToolError, tool
from passhat.sandbox.domains.consulting import models as m
from passhat.sandbox.domains.consulting.systems.base import ConsultingSystem, require


class Learning(ConsultingSystem):
    """The learning platform: a course is for everyone or for one role."""

    NAME = "learning"

    @tool("lookup")
    async def list_courses(self, audience: str) -> dict[str, Any]:
        """Courses for an audience: `everyone`, or a role (software_engineer, consultant, ...)."""
        require(audience=audience)
        return {"audience": audience, "courses": self.rows(m.courses, audience=audience.strip())}

    @tool("lookup")
    async def get_enrollments(self, employee_id: str) -> dict[str, Any]:
        """An employee's course enrollments."""
        employee = self._subject(employee_id)
        return {
            "employee_id": employee["employee_id"],
            "enrollments": self.rows(m.enrollments, employee_id=employee["employee_id"]),
        }

    @tool("write")
    async def enroll_in_course(self, employee_id: str, course_id: str) -> dict[str, Any]:
        """Enroll an employee in a course for everyone or for their HRIS role."""
        require(employee_id=employee_id, course_id=course_id)
        employee = self._subject(employee_id)
        course = self._found(m.courses, "course", course_id=course_id.strip())
        if course["audience"] not in ("everyone", employee["role"]):
            raise ToolError(
                "hris_not_updated", f"{course_id} is for {course['audience']}; HRIS shows {employee['role']}"
            )
        if self.row(m.enrollments, employee_id=employee["employee_id"], course_id=course["course_id"]) is not None:
            raise ToolError("already_exists", f"{employee_id} is already enrolled in {course_id}")
        values = {
            "employee_id": employee["employee_id"],
            "course_id": course["course_id"],
            "status": "enrolled",
            "enrolled_at": m.TODAY,
        }
        self._write(
            employee["employee_id"], "enroll_in_course", course["course_id"], insert(m.enrollments).values(values)
        )
        return values


system = System("learning", "Learning: courses and enrollments.", ("courses", "enrollments"), Learning)
