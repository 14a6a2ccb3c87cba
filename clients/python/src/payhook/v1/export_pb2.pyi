from buf.validate import validate_pb2 as _validate_pb2
from google.api import annotations_pb2 as _annotations_pb2
from google.api import httpbody_pb2 as _httpbody_pb2
from payhook.v1 import access_pb2 as _access_pb2
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Optional as _Optional

DESCRIPTOR: _descriptor.FileDescriptor

class ExportLedgerRequest(_message.Message):
    __slots__ = ["format", "to"]
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    FROM_FIELD_NUMBER: _ClassVar[int]
    TO_FIELD_NUMBER: _ClassVar[int]
    format: str
    to: str
    def __init__(self, to: _Optional[str] = ..., format: _Optional[str] = ..., **kwargs) -> None: ...
