from buf.validate import validate_pb2 as _validate_pb2
from google.api import annotations_pb2 as _annotations_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from payhook.v1 import access_pb2 as _access_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Event(_message.Message):
    __slots__ = ["created_at", "cursor", "payload", "type", "uuid"]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    UUID_FIELD_NUMBER: _ClassVar[int]
    created_at: str
    cursor: str
    payload: str
    type: str
    uuid: str
    def __init__(self, cursor: _Optional[str] = ..., uuid: _Optional[str] = ..., type: _Optional[str] = ..., created_at: _Optional[str] = ..., payload: _Optional[str] = ...) -> None: ...

class EventType(_message.Message):
    __slots__ = ["description", "name", "schema", "services"]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    SCHEMA_FIELD_NUMBER: _ClassVar[int]
    SERVICES_FIELD_NUMBER: _ClassVar[int]
    description: str
    name: str
    schema: _struct_pb2.Struct
    services: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., services: _Optional[_Iterable[str]] = ..., schema: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class ListEventTypesRequest(_message.Message):
    __slots__ = ["name"]
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class ListEventTypesResponse(_message.Message):
    __slots__ = ["event_types"]
    EVENT_TYPES_FIELD_NUMBER: _ClassVar[int]
    event_types: _containers.RepeatedCompositeFieldContainer[EventType]
    def __init__(self, event_types: _Optional[_Iterable[_Union[EventType, _Mapping]]] = ...) -> None: ...

class ListEventsRequest(_message.Message):
    __slots__ = ["after", "event_types", "limit"]
    AFTER_FIELD_NUMBER: _ClassVar[int]
    EVENT_TYPES_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    after: str
    event_types: _containers.RepeatedScalarFieldContainer[str]
    limit: int
    def __init__(self, after: _Optional[str] = ..., limit: _Optional[int] = ..., event_types: _Optional[_Iterable[str]] = ...) -> None: ...

class ListEventsResponse(_message.Message):
    __slots__ = ["events", "next_cursor"]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[Event]
    next_cursor: str
    def __init__(self, events: _Optional[_Iterable[_Union[Event, _Mapping]]] = ..., next_cursor: _Optional[str] = ...) -> None: ...
