from buf.validate import validate_pb2 as _validate_pb2
from google.api import annotations_pb2 as _annotations_pb2
from payhook.v1 import access_pb2 as _access_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class CreatePayoutFromRequestsRequest(_message.Message):
    __slots__ = ["request_ids"]
    REQUEST_IDS_FIELD_NUMBER: _ClassVar[int]
    request_ids: str
    def __init__(self, request_ids: _Optional[str] = ...) -> None: ...

class CreatePayoutFromRequestsResponse(_message.Message):
    __slots__ = ["payout_info"]
    PAYOUT_INFO_FIELD_NUMBER: _ClassVar[int]
    payout_info: PayoutInfo
    def __init__(self, payout_info: _Optional[_Union[PayoutInfo, _Mapping]] = ...) -> None: ...

class CreatePayoutRequestsRequest(_message.Message):
    __slots__ = ["outputs", "ticker"]
    class OutputsEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    OUTPUTS_FIELD_NUMBER: _ClassVar[int]
    TICKER_FIELD_NUMBER: _ClassVar[int]
    outputs: _containers.ScalarMap[str, str]
    ticker: str
    def __init__(self, ticker: _Optional[str] = ..., outputs: _Optional[_Mapping[str, str]] = ...) -> None: ...

class CreatePayoutRequestsResponse(_message.Message):
    __slots__ = ["request_ids"]
    REQUEST_IDS_FIELD_NUMBER: _ClassVar[int]
    request_ids: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, request_ids: _Optional[_Iterable[int]] = ...) -> None: ...

class GetPayoutBalanceRequest(_message.Message):
    __slots__ = ["ticker"]
    TICKER_FIELD_NUMBER: _ClassVar[int]
    ticker: str
    def __init__(self, ticker: _Optional[str] = ...) -> None: ...

class GetPayoutBalanceResponse(_message.Message):
    __slots__ = ["balance"]
    BALANCE_FIELD_NUMBER: _ClassVar[int]
    balance: str
    def __init__(self, balance: _Optional[str] = ...) -> None: ...

class GetPayoutPSBTRequest(_message.Message):
    __slots__ = ["payout_id"]
    PAYOUT_ID_FIELD_NUMBER: _ClassVar[int]
    payout_id: int
    def __init__(self, payout_id: _Optional[int] = ...) -> None: ...

class GetPayoutPSBTResponse(_message.Message):
    __slots__ = ["network_fee", "payout_info", "psbt", "signed", "txid"]
    NETWORK_FEE_FIELD_NUMBER: _ClassVar[int]
    PAYOUT_INFO_FIELD_NUMBER: _ClassVar[int]
    PSBT_FIELD_NUMBER: _ClassVar[int]
    SIGNED_FIELD_NUMBER: _ClassVar[int]
    TXID_FIELD_NUMBER: _ClassVar[int]
    network_fee: str
    payout_info: PayoutInfo
    psbt: str
    signed: bool
    txid: str
    def __init__(self, payout_info: _Optional[_Union[PayoutInfo, _Mapping]] = ..., psbt: _Optional[str] = ..., network_fee: _Optional[str] = ..., signed: bool = ..., txid: _Optional[str] = ...) -> None: ...

class GetPayoutStatusRequest(_message.Message):
    __slots__ = ["payout_id"]
    PAYOUT_ID_FIELD_NUMBER: _ClassVar[int]
    payout_id: int
    def __init__(self, payout_id: _Optional[int] = ...) -> None: ...

class GetPayoutStatusResponse(_message.Message):
    __slots__ = ["payout_info"]
    PAYOUT_INFO_FIELD_NUMBER: _ClassVar[int]
    payout_info: PayoutInfo
    def __init__(self, payout_info: _Optional[_Union[PayoutInfo, _Mapping]] = ...) -> None: ...

class GetPayoutWalletRequest(_message.Message):
    __slots__ = ["ticker"]
    TICKER_FIELD_NUMBER: _ClassVar[int]
    ticker: str
    def __init__(self, ticker: _Optional[str] = ...) -> None: ...

class GetPayoutWalletResponse(_message.Message):
    __slots__ = ["address"]
    ADDRESS_FIELD_NUMBER: _ClassVar[int]
    address: str
    def __init__(self, address: _Optional[str] = ...) -> None: ...

class ListPayoutRequestPageRequest(_message.Message):
    __slots__ = ["p", "status", "ticker"]
    P_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    TICKER_FIELD_NUMBER: _ClassVar[int]
    p: int
    status: str
    ticker: str
    def __init__(self, ticker: _Optional[str] = ..., status: _Optional[str] = ..., p: _Optional[int] = ...) -> None: ...

class ListPayoutRequestPageResponse(_message.Message):
    __slots__ = ["num_pages", "payout_requests"]
    NUM_PAGES_FIELD_NUMBER: _ClassVar[int]
    PAYOUT_REQUESTS_FIELD_NUMBER: _ClassVar[int]
    num_pages: int
    payout_requests: _containers.RepeatedCompositeFieldContainer[PayoutRequestInfo]
    def __init__(self, payout_requests: _Optional[_Iterable[_Union[PayoutRequestInfo, _Mapping]]] = ..., num_pages: _Optional[int] = ...) -> None: ...

class ListPayoutsRequest(_message.Message):
    __slots__ = ["p", "status", "ticker"]
    P_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    TICKER_FIELD_NUMBER: _ClassVar[int]
    p: int
    status: str
    ticker: str
    def __init__(self, ticker: _Optional[str] = ..., status: _Optional[str] = ..., p: _Optional[int] = ...) -> None: ...

class ListPayoutsResponse(_message.Message):
    __slots__ = ["num_pages", "payouts"]
    NUM_PAGES_FIELD_NUMBER: _ClassVar[int]
    PAYOUTS_FIELD_NUMBER: _ClassVar[int]
    num_pages: int
    payouts: _containers.RepeatedCompositeFieldContainer[PayoutInfo]
    def __init__(self, payouts: _Optional[_Iterable[_Union[PayoutInfo, _Mapping]]] = ..., num_pages: _Optional[int] = ...) -> None: ...

class PayoutInfo(_message.Message):
    __slots__ = ["approval_reason", "blockchain_fee", "coin", "error", "fee", "id", "requests", "status", "timestamp", "total_requested", "total_with_fee", "txid"]
    class RequestsEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    APPROVAL_REASON_FIELD_NUMBER: _ClassVar[int]
    BLOCKCHAIN_FEE_FIELD_NUMBER: _ClassVar[int]
    COIN_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    FEE_FIELD_NUMBER: _ClassVar[int]
    FROM_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    REQUESTS_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    TOTAL_REQUESTED_FIELD_NUMBER: _ClassVar[int]
    TOTAL_WITH_FEE_FIELD_NUMBER: _ClassVar[int]
    TXID_FIELD_NUMBER: _ClassVar[int]
    approval_reason: str
    blockchain_fee: str
    coin: str
    error: str
    fee: str
    id: int
    requests: _containers.ScalarMap[str, str]
    status: str
    timestamp: str
    total_requested: str
    total_with_fee: str
    txid: str
    def __init__(self, id: _Optional[int] = ..., status: _Optional[str] = ..., requests: _Optional[_Mapping[str, str]] = ..., total_requested: _Optional[str] = ..., total_with_fee: _Optional[str] = ..., fee: _Optional[str] = ..., blockchain_fee: _Optional[str] = ..., coin: _Optional[str] = ..., txid: _Optional[str] = ..., error: _Optional[str] = ..., timestamp: _Optional[str] = ..., approval_reason: _Optional[str] = ..., **kwargs) -> None: ...

class PayoutRequestInfo(_message.Message):
    __slots__ = ["address", "coin", "id", "payout_id", "status", "timestamp", "value"]
    ADDRESS_FIELD_NUMBER: _ClassVar[int]
    COIN_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    PAYOUT_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    address: str
    coin: str
    id: int
    payout_id: int
    status: str
    timestamp: str
    value: str
    def __init__(self, id: _Optional[int] = ..., address: _Optional[str] = ..., value: _Optional[str] = ..., coin: _Optional[str] = ..., status: _Optional[str] = ..., payout_id: _Optional[int] = ..., timestamp: _Optional[str] = ...) -> None: ...

class ProcessPayoutRequest(_message.Message):
    __slots__ = ["payout_id"]
    PAYOUT_ID_FIELD_NUMBER: _ClassVar[int]
    payout_id: int
    def __init__(self, payout_id: _Optional[int] = ...) -> None: ...

class ProcessPayoutRequestsRequest(_message.Message):
    __slots__ = ["outputs", "ticker"]
    class OutputsEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    OUTPUTS_FIELD_NUMBER: _ClassVar[int]
    TICKER_FIELD_NUMBER: _ClassVar[int]
    outputs: _containers.ScalarMap[str, str]
    ticker: str
    def __init__(self, ticker: _Optional[str] = ..., outputs: _Optional[_Mapping[str, str]] = ...) -> None: ...

class ProcessPayoutRequestsResponse(_message.Message):
    __slots__ = ["payout_info", "queued"]
    PAYOUT_INFO_FIELD_NUMBER: _ClassVar[int]
    QUEUED_FIELD_NUMBER: _ClassVar[int]
    payout_info: PayoutInfo
    queued: bool
    def __init__(self, payout_info: _Optional[_Union[PayoutInfo, _Mapping]] = ..., queued: bool = ...) -> None: ...

class ProcessPayoutResponse(_message.Message):
    __slots__ = ["payout_info", "queued"]
    PAYOUT_INFO_FIELD_NUMBER: _ClassVar[int]
    QUEUED_FIELD_NUMBER: _ClassVar[int]
    payout_info: PayoutInfo
    queued: bool
    def __init__(self, payout_info: _Optional[_Union[PayoutInfo, _Mapping]] = ..., queued: bool = ...) -> None: ...

class SubmitPayoutPSBTRequest(_message.Message):
    __slots__ = ["payout_id", "psbt"]
    PAYOUT_ID_FIELD_NUMBER: _ClassVar[int]
    PSBT_FIELD_NUMBER: _ClassVar[int]
    payout_id: int
    psbt: str
    def __init__(self, payout_id: _Optional[int] = ..., psbt: _Optional[str] = ...) -> None: ...

class SubmitPayoutPSBTResponse(_message.Message):
    __slots__ = ["payout_info"]
    PAYOUT_INFO_FIELD_NUMBER: _ClassVar[int]
    payout_info: PayoutInfo
    def __init__(self, payout_info: _Optional[_Union[PayoutInfo, _Mapping]] = ...) -> None: ...
