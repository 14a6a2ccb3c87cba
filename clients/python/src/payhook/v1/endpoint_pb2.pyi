from buf.validate import validate_pb2 as _validate_pb2
from google.api import annotations_pb2 as _annotations_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from payhook.v1 import access_pb2 as _access_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class CreateEndpointRequest(_message.Message):
    __slots__ = ["description", "event_types", "max_per_second", "url"]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    EVENT_TYPES_FIELD_NUMBER: _ClassVar[int]
    MAX_PER_SECOND_FIELD_NUMBER: _ClassVar[int]
    URL_FIELD_NUMBER: _ClassVar[int]
    description: str
    event_types: _containers.RepeatedScalarFieldContainer[str]
    max_per_second: int
    url: str
    def __init__(self, url: _Optional[str] = ..., event_types: _Optional[_Iterable[str]] = ..., description: _Optional[str] = ..., max_per_second: _Optional[int] = ...) -> None: ...

class CreateEndpointResponse(_message.Message):
    __slots__ = ["endpoint", "secret"]
    ENDPOINT_FIELD_NUMBER: _ClassVar[int]
    SECRET_FIELD_NUMBER: _ClassVar[int]
    endpoint: Endpoint
    secret: str
    def __init__(self, endpoint: _Optional[_Union[Endpoint, _Mapping]] = ..., secret: _Optional[str] = ...) -> None: ...

class DeleteEndpointRequest(_message.Message):
    __slots__ = ["endpoint_id"]
    ENDPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    endpoint_id: str
    def __init__(self, endpoint_id: _Optional[str] = ...) -> None: ...

class DeleteEndpointResponse(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class Endpoint(_message.Message):
    __slots__ = ["created_at", "description", "endpoint_id", "event_types", "failing_since", "max_per_second", "paused_at", "paused_reason", "status", "updated_at", "url"]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    ENDPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    EVENT_TYPES_FIELD_NUMBER: _ClassVar[int]
    FAILING_SINCE_FIELD_NUMBER: _ClassVar[int]
    MAX_PER_SECOND_FIELD_NUMBER: _ClassVar[int]
    PAUSED_AT_FIELD_NUMBER: _ClassVar[int]
    PAUSED_REASON_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    URL_FIELD_NUMBER: _ClassVar[int]
    created_at: _timestamp_pb2.Timestamp
    description: str
    endpoint_id: str
    event_types: _containers.RepeatedScalarFieldContainer[str]
    failing_since: _timestamp_pb2.Timestamp
    max_per_second: int
    paused_at: _timestamp_pb2.Timestamp
    paused_reason: str
    status: str
    updated_at: _timestamp_pb2.Timestamp
    url: str
    def __init__(self, endpoint_id: _Optional[str] = ..., url: _Optional[str] = ..., description: _Optional[str] = ..., event_types: _Optional[_Iterable[str]] = ..., max_per_second: _Optional[int] = ..., status: _Optional[str] = ..., paused_reason: _Optional[str] = ..., paused_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., failing_since: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., created_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class GetEndpointRequest(_message.Message):
    __slots__ = ["endpoint_id"]
    ENDPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    endpoint_id: str
    def __init__(self, endpoint_id: _Optional[str] = ...) -> None: ...

class GetEndpointResponse(_message.Message):
    __slots__ = ["endpoint"]
    ENDPOINT_FIELD_NUMBER: _ClassVar[int]
    endpoint: Endpoint
    def __init__(self, endpoint: _Optional[_Union[Endpoint, _Mapping]] = ...) -> None: ...

class ListEndpointsRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class ListEndpointsResponse(_message.Message):
    __slots__ = ["endpoints"]
    ENDPOINTS_FIELD_NUMBER: _ClassVar[int]
    endpoints: _containers.RepeatedCompositeFieldContainer[Endpoint]
    def __init__(self, endpoints: _Optional[_Iterable[_Union[Endpoint, _Mapping]]] = ...) -> None: ...

class PauseEndpointRequest(_message.Message):
    __slots__ = ["endpoint_id"]
    ENDPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    endpoint_id: str
    def __init__(self, endpoint_id: _Optional[str] = ...) -> None: ...

class PauseEndpointResponse(_message.Message):
    __slots__ = ["endpoint"]
    ENDPOINT_FIELD_NUMBER: _ClassVar[int]
    endpoint: Endpoint
    def __init__(self, endpoint: _Optional[_Union[Endpoint, _Mapping]] = ...) -> None: ...

class ReplayEndpointRequest(_message.Message):
    __slots__ = ["endpoint_id", "event_types", "since", "until"]
    ENDPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    EVENT_TYPES_FIELD_NUMBER: _ClassVar[int]
    SINCE_FIELD_NUMBER: _ClassVar[int]
    UNTIL_FIELD_NUMBER: _ClassVar[int]
    endpoint_id: str
    event_types: _containers.RepeatedScalarFieldContainer[str]
    since: _timestamp_pb2.Timestamp
    until: _timestamp_pb2.Timestamp
    def __init__(self, endpoint_id: _Optional[str] = ..., since: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., until: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., event_types: _Optional[_Iterable[str]] = ...) -> None: ...

class ReplayEndpointResponse(_message.Message):
    __slots__ = ["next_since", "replayed"]
    NEXT_SINCE_FIELD_NUMBER: _ClassVar[int]
    REPLAYED_FIELD_NUMBER: _ClassVar[int]
    next_since: _timestamp_pb2.Timestamp
    replayed: int
    def __init__(self, replayed: _Optional[int] = ..., next_since: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ResumeEndpointRequest(_message.Message):
    __slots__ = ["endpoint_id"]
    ENDPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    endpoint_id: str
    def __init__(self, endpoint_id: _Optional[str] = ...) -> None: ...

class ResumeEndpointResponse(_message.Message):
    __slots__ = ["endpoint"]
    ENDPOINT_FIELD_NUMBER: _ClassVar[int]
    endpoint: Endpoint
    def __init__(self, endpoint: _Optional[_Union[Endpoint, _Mapping]] = ...) -> None: ...

class RotateEndpointSecretRequest(_message.Message):
    __slots__ = ["endpoint_id", "grace_seconds"]
    ENDPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    GRACE_SECONDS_FIELD_NUMBER: _ClassVar[int]
    endpoint_id: str
    grace_seconds: int
    def __init__(self, endpoint_id: _Optional[str] = ..., grace_seconds: _Optional[int] = ...) -> None: ...

class RotateEndpointSecretResponse(_message.Message):
    __slots__ = ["previous_secret_until", "secret"]
    PREVIOUS_SECRET_UNTIL_FIELD_NUMBER: _ClassVar[int]
    SECRET_FIELD_NUMBER: _ClassVar[int]
    previous_secret_until: _timestamp_pb2.Timestamp
    secret: str
    def __init__(self, secret: _Optional[str] = ..., previous_secret_until: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class TestEndpointRequest(_message.Message):
    __slots__ = ["endpoint_id"]
    ENDPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    endpoint_id: str
    def __init__(self, endpoint_id: _Optional[str] = ...) -> None: ...

class TestEndpointResponse(_message.Message):
    __slots__ = ["uuid"]
    UUID_FIELD_NUMBER: _ClassVar[int]
    uuid: str
    def __init__(self, uuid: _Optional[str] = ...) -> None: ...

class UpdateEndpointRequest(_message.Message):
    __slots__ = ["description", "endpoint_id", "event_types", "max_per_second", "url"]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    ENDPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    EVENT_TYPES_FIELD_NUMBER: _ClassVar[int]
    MAX_PER_SECOND_FIELD_NUMBER: _ClassVar[int]
    URL_FIELD_NUMBER: _ClassVar[int]
    description: str
    endpoint_id: str
    event_types: _containers.RepeatedScalarFieldContainer[str]
    max_per_second: int
    url: str
    def __init__(self, endpoint_id: _Optional[str] = ..., url: _Optional[str] = ..., event_types: _Optional[_Iterable[str]] = ..., description: _Optional[str] = ..., max_per_second: _Optional[int] = ...) -> None: ...

class UpdateEndpointResponse(_message.Message):
    __slots__ = ["endpoint"]
    ENDPOINT_FIELD_NUMBER: _ClassVar[int]
    endpoint: Endpoint
    def __init__(self, endpoint: _Optional[_Union[Endpoint, _Mapping]] = ...) -> None: ...
