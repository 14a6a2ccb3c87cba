from google.api import annotations_pb2 as _annotations_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from payhook.v1 import access_pb2 as _access_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class HeldAddress(_message.Message):
    __slots__ = ["address_in", "balance", "derivation_index", "derivation_path", "payments"]
    ADDRESS_IN_FIELD_NUMBER: _ClassVar[int]
    BALANCE_FIELD_NUMBER: _ClassVar[int]
    DERIVATION_INDEX_FIELD_NUMBER: _ClassVar[int]
    DERIVATION_PATH_FIELD_NUMBER: _ClassVar[int]
    PAYMENTS_FIELD_NUMBER: _ClassVar[int]
    address_in: str
    balance: str
    derivation_index: int
    derivation_path: str
    payments: int
    def __init__(self, address_in: _Optional[str] = ..., balance: _Optional[str] = ..., payments: _Optional[int] = ..., derivation_path: _Optional[str] = ..., derivation_index: _Optional[int] = ...) -> None: ...

class HeldTicker(_message.Message):
    __slots__ = ["addresses", "coin", "payments", "ticker", "total"]
    ADDRESSES_FIELD_NUMBER: _ClassVar[int]
    COIN_FIELD_NUMBER: _ClassVar[int]
    PAYMENTS_FIELD_NUMBER: _ClassVar[int]
    TICKER_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    addresses: _containers.RepeatedCompositeFieldContainer[HeldAddress]
    coin: str
    payments: int
    ticker: str
    total: str
    def __init__(self, ticker: _Optional[str] = ..., coin: _Optional[str] = ..., total: _Optional[str] = ..., payments: _Optional[int] = ..., addresses: _Optional[_Iterable[_Union[HeldAddress, _Mapping]]] = ...) -> None: ...

class ListHeldFundsRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class ListHeldFundsResponse(_message.Message):
    __slots__ = ["tickers"]
    TICKERS_FIELD_NUMBER: _ClassVar[int]
    tickers: _containers.RepeatedCompositeFieldContainer[HeldTicker]
    def __init__(self, tickers: _Optional[_Iterable[_Union[HeldTicker, _Mapping]]] = ...) -> None: ...

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
