from buf.validate import validate_pb2 as _validate_pb2
from google.api import annotations_pb2 as _annotations_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from payhook.v1 import access_pb2 as _access_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class HeldAddress(_message.Message):
    __slots__ = ["address_in", "balance", "derivation_index", "derivation_path", "payments", "project_id", "reasons", "ticker"]
    ADDRESS_IN_FIELD_NUMBER: _ClassVar[int]
    BALANCE_FIELD_NUMBER: _ClassVar[int]
    DERIVATION_INDEX_FIELD_NUMBER: _ClassVar[int]
    DERIVATION_PATH_FIELD_NUMBER: _ClassVar[int]
    PAYMENTS_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    REASONS_FIELD_NUMBER: _ClassVar[int]
    TICKER_FIELD_NUMBER: _ClassVar[int]
    address_in: str
    balance: str
    derivation_index: int
    derivation_path: str
    payments: int
    project_id: int
    reasons: _containers.RepeatedScalarFieldContainer[str]
    ticker: str
    def __init__(self, address_in: _Optional[str] = ..., balance: _Optional[str] = ..., payments: _Optional[int] = ..., derivation_path: _Optional[str] = ..., derivation_index: _Optional[int] = ..., ticker: _Optional[str] = ..., project_id: _Optional[int] = ..., reasons: _Optional[_Iterable[str]] = ...) -> None: ...

class HeldReason(_message.Message):
    __slots__ = ["payments", "reason", "total"]
    PAYMENTS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    payments: int
    reason: str
    total: str
    def __init__(self, reason: _Optional[str] = ..., total: _Optional[str] = ..., payments: _Optional[int] = ...) -> None: ...

class HeldTicker(_message.Message):
    __slots__ = ["address_count", "by_reason", "coin", "payments", "ticker", "total"]
    ADDRESS_COUNT_FIELD_NUMBER: _ClassVar[int]
    BY_REASON_FIELD_NUMBER: _ClassVar[int]
    COIN_FIELD_NUMBER: _ClassVar[int]
    PAYMENTS_FIELD_NUMBER: _ClassVar[int]
    TICKER_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    address_count: int
    by_reason: _containers.RepeatedCompositeFieldContainer[HeldReason]
    coin: str
    payments: int
    ticker: str
    total: str
    def __init__(self, ticker: _Optional[str] = ..., coin: _Optional[str] = ..., total: _Optional[str] = ..., payments: _Optional[int] = ..., address_count: _Optional[int] = ..., by_reason: _Optional[_Iterable[_Union[HeldReason, _Mapping]]] = ...) -> None: ...

class ListHeldFundsRequest(_message.Message):
    __slots__ = ["page_size", "page_token"]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListHeldFundsResponse(_message.Message):
    __slots__ = ["addresses", "next_page_token", "tickers"]
    ADDRESSES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    TICKERS_FIELD_NUMBER: _ClassVar[int]
    addresses: _containers.RepeatedCompositeFieldContainer[HeldAddress]
    next_page_token: str
    tickers: _containers.RepeatedCompositeFieldContainer[HeldTicker]
    def __init__(self, tickers: _Optional[_Iterable[_Union[HeldTicker, _Mapping]]] = ..., addresses: _Optional[_Iterable[_Union[HeldAddress, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class ListPayoutRequestsRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class ListPayoutRequestsResponse(_message.Message):
    __slots__ = ["requests"]
    REQUESTS_FIELD_NUMBER: _ClassVar[int]
    requests: _containers.RepeatedCompositeFieldContainer[PayoutRequest]
    def __init__(self, requests: _Optional[_Iterable[_Union[PayoutRequest, _Mapping]]] = ...) -> None: ...

class PayoutRequest(_message.Message):
    __slots__ = ["address", "api_key_id", "requested_at", "status", "ticker", "uuid", "value"]
    ADDRESS_FIELD_NUMBER: _ClassVar[int]
    API_KEY_ID_FIELD_NUMBER: _ClassVar[int]
    REQUESTED_AT_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    TICKER_FIELD_NUMBER: _ClassVar[int]
    UUID_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    address: str
    api_key_id: int
    requested_at: _timestamp_pb2.Timestamp
    status: str
    ticker: str
    uuid: str
    value: str
    def __init__(self, uuid: _Optional[str] = ..., api_key_id: _Optional[int] = ..., ticker: _Optional[str] = ..., address: _Optional[str] = ..., value: _Optional[str] = ..., status: _Optional[str] = ..., requested_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...
