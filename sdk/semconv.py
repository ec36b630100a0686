"""The span, attribute and event names passhat emits: the contract the collector reads (docs/sdk.md)."""

from __future__ import annotations

from typing import Final

# OpenTelemetry GenAI semantic conventions.
OPERATION_NAME: Final = "gen_ai.operation.name"
AGENT_NAME: Final = "gen_ai.agent.name"
CONVERSATION_ID: Final = "gen_ai.conversation.id"
TOOL_NAME: Final = "gen_ai.tool.name"
TOOL_CALL_ID: Final = "gen_ai.tool.call.id"
TOOL_TYPE: Final = "gen_ai.tool.type"
TOOL_CALL_ARGUMENTS: Final = "gen_ai.tool.call.arguments"
TOOL_CALL_RESULT: Final = "gen_ai.tool.call.result"
PROVIDER_NAME: Final = "gen_ai.provider.name"
REQUEST_MODEL: Final = "gen_ai.request.model"
RESPONSE_MODEL: Final = "gen_ai.response.model"
RESPONSE_ID: Final = "gen_ai.response.id"
USAGE_INPUT_TOKENS: Final = "gen_ai.usage.input_tokens"
USAGE_OUTPUT_TOKENS: Final = "gen_ai.usage.output_tokens"
RESPONSE_FINISH_REASONS: Final = "gen_ai.response.finish_reasons"
USAGE_CACHE_READ_INPUT_TOKENS: Final = "gen_ai.usage.cache_read.input_tokens"
USAGE_CACHE_CREATION_INPUT_TOKENS: Final = "gen_ai.usage.cache_creation.input_tokens"
# Message content, opt-in (capture_content) and redacted like tool arguments: JSON arrays of messages of parts.
INPUT_MESSAGES: Final = "gen_ai.input.messages"
OUTPUT_MESSAGES: Final = "gen_ai.output.messages"
SYSTEM_INSTRUCTIONS: Final = "gen_ai.system_instructions"
TOOL_DEFINITIONS: Final = "gen_ai.tool.definitions"
TOOL_DESCRIPTION: Final = "gen_ai.tool.description"
# Older conventions named a workflow by its own attribute; current ones use gen_ai.agent.name on invoke_workflow.
WORKFLOW_NAME: Final = "gen_ai.workflow.name"
ERROR_TYPE: Final = "error.type"
# OpenTelemetry's exception event, recorded when an exception leaves a span.
EVENT_EXCEPTION: Final = "exception"
EXCEPTION_TYPE: Final = "exception.type"
EXCEPTION_MESSAGE: Final = "exception.message"
MCP_METHOD_NAME: Final = "mcp.method.name"

OP_INVOKE_AGENT: Final = "invoke_agent"
OP_EXECUTE_TOOL: Final = "execute_tool"
OP_CHAT: Final = "chat"
OP_INVOKE_WORKFLOW: Final = "invoke_workflow"
OP_CREATE_AGENT: Final = "create_agent"
OP_GENERATE_CONTENT: Final = "generate_content"
OP_TEXT_COMPLETION: Final = "text_completion"
OP_EMBEDDINGS: Final = "embeddings"
OP_RETRIEVAL: Final = "retrieval"
# Every `gen_ai.operation.name` of the conventions: the collector keeps these as they are, anything else is "other".
OPERATIONS: Final = (
    OP_INVOKE_AGENT,
    OP_INVOKE_WORKFLOW,
    OP_CREATE_AGENT,
    OP_EXECUTE_TOOL,
    OP_CHAT,
    OP_GENERATE_CONTENT,
    OP_TEXT_COMPLETION,
    OP_EMBEDDINGS,
    OP_RETRIEVAL,
)
# The operations that are one call of a model that can ask for tools.
MODEL_CALL_OPERATIONS: Final = (OP_CHAT, OP_GENERATE_CONTENT, OP_TEXT_COMPLETION)

# passhat's own namespace.
TICKET_ID: Final = "passhat.ticket.id"
TASK_TYPE: Final = "passhat.task_type"
SOURCE: Final = "passhat.source"
INTENT: Final = "passhat.intent"
DOMAIN: Final = "passhat.domain"
TICKET_OUTCOME: Final = "passhat.ticket.outcome"
REPLAY_RUN_ID: Final = "passhat.replay.run_id"
TRIAL_ATTEMPT: Final = "passhat.trial.attempt"
ENVIRONMENT: Final = "deployment.environment.name"
TOOL_OUTCOME: Final = "passhat.tool.outcome"
TOOL_YIELDS: Final = "passhat.tool.yields"  # how many items a generator tool yielded
CHAT_TOOL_CALL_IDS: Final = "passhat.chat.tool_call_ids"
PARTICIPANT: Final = "passhat.participant"

EVENT_CUSTOMER_MESSAGE: Final = "passhat.customer_message"
EVENT_AGENT_MESSAGE: Final = "passhat.agent_message"
MESSAGE_CONTENT: Final = "passhat.message.content"

EVENT_STATE_WRITE: Final = "passhat.state_write"
STATE_WRITE_TABLE: Final = "passhat.state_write.table"
STATE_WRITE_KEY: Final = "passhat.state_write.key"
STATE_WRITE_OP: Final = "passhat.state_write.op"
STATE_WRITE_BEFORE: Final = "passhat.state_write.before"
STATE_WRITE_AFTER: Final = "passhat.state_write.after"
STATE_WRITE_CHANGED: Final = "passhat.state_write.changed"
STATE_WRITE_ROWCOUNT: Final = "passhat.state_write.rowcount"

EVENT_STATE_READ: Final = "passhat.state_read"
STATE_READ_TABLE: Final = "passhat.state_read.table"
STATE_READ_KEY: Final = "passhat.state_read.key"
STATE_READ_ROW: Final = "passhat.state_read.row"

# A sandbox trial's check result and how it ended (emitted by the sandbox, not by the SDK).
EVENT_EVALUATION_RESULT: Final = "gen_ai.evaluation.result"
EVALUATION_NAME: Final = "gen_ai.evaluation.name"
EVALUATION_SCORE_VALUE: Final = "gen_ai.evaluation.score.value"
EVALUATION_SCORE_LABEL: Final = "gen_ai.evaluation.score.label"
EVALUATION_EXPLANATION: Final = "gen_ai.evaluation.explanation"
TRIAL_TERMINATION_REASON: Final = "passhat.trial.termination_reason"
TRIAL_SIGNATURE: Final = "passhat.trial.signature"

SOURCES: Final = ("production", "sandbox")
TOOL_OUTCOMES: Final = ("ok", "error", "empty")
WRITE_OPS: Final = ("insert", "update", "delete", "bulk_update", "bulk_delete", "bulk_insert")
