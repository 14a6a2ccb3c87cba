from buf.validate import validate_pb2 as _validate_pb2
from google.api import annotations_pb2 as _annotations_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from payhook.v1 import access_pb2 as _access_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class DeliveryEvent(_message.Message):
    __slots__ = ["address_in", "attempt", "cursor", "delivery_status", "error", "http_status", "kind", "next_attempt_at", "outcome", "payment_status", "request", "ticker", "time", "uuid"]
    ADDRESS_IN_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    DELIVERY_STATUS_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    HTTP_STATUS_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    NEXT_ATTEMPT_AT_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    PAYMENT_STATUS_FIELD_NUMBER: _ClassVar[int]
    REQUEST_FIELD_NUMBER: _ClassVar[int]
    TICKER_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    UUID_FIELD_NUMBER: _ClassVar[int]
    address_in: str
    attempt: int
    cursor: int
    delivery_status: str
    error: str
    http_status: int
    kind: str
    next_attempt_at: _timestamp_pb2.Timestamp
    outcome: str
    payment_status: str
    request: DeliveryRequest
    ticker: str
    time: _timestamp_pb2.Timestamp
    uuid: str
    def __init__(self, cursor: _Optional[int] = ..., uuid: _Optional[str] = ..., address_in: _Optional[str] = ..., ticker: _Optional[str] = ..., payment_status: _Optional[str] = ..., kind: _Optional[str] = ..., attempt: _Optional[int] = ..., outcome: _Optional[str] = ..., http_status: _Optional[int] = ..., error: _Optional[str] = ..., delivery_status: _Optional[str] = ..., next_attempt_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., request: _Optional[_Union[DeliveryRequest, _Mapping]] = ...) -> None: ...

class DeliveryRequest(_message.Message):
    __slots__ = ["body", "headers", "method", "url"]
    class HeadersEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    BODY_FIELD_NUMBER: _ClassVar[int]
    HEADERS_FIELD_NUMBER: _ClassVar[int]
    METHOD_FIELD_NUMBER: _ClassVar[int]
    URL_FIELD_NUMBER: _ClassVar[int]
    body: bytes
    headers: _containers.ScalarMap[str, str]
    method: str
    url: str
    def __init__(self, method: _Optional[str] = ..., url: _Optional[str] = ..., headers: _Optional[_Mapping[str, str]] = ..., body: _Optional[bytes] = ...) -> None: ...

class WatchDeliveriesRequest(_message.Message):
    __slots__ = ["address_in", "after_cursor", "include_request", "live_only", "ticker", "uuid"]
    ADDRESS_IN_FIELD_NUMBER: _ClassVar[int]
    AFTER_CURSOR_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_REQUEST_FIELD_NUMBER: _ClassVar[int]
    LIVE_ONLY_FIELD_NUMBER: _ClassVar[int]
    TICKER_FIELD_NUMBER: _ClassVar[int]
    UUID_FIELD_NUMBER: _ClassVar[int]
    address_in: str
    after_cursor: int
    include_request: bool
    live_only: bool
    ticker: str
    uuid: str
    def __init__(self, address_in: _Optional[str] = ..., ticker: _Optional[str] = ..., uuid: _Optional[str] = ..., after_cursor: _Optional[int] = ..., include_request: bool = ..., live_only: bool = ...) -> None: ...

class WatchDeliveriesResponse(_message.Message):
    __slots__ = ["event"]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    event: DeliveryEvent
    def __init__(self, event: _Optional[_Union[DeliveryEvent, _Mapping]] = ...) -> None: ...
