from buf.validate import validate_pb2 as _validate_pb2
from google.api import annotations_pb2 as _annotations_pb2
from payhook.v1 import access_pb2 as _access_pb2
from payhook.v1 import payout_pb2 as _payout_pb2
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ApproveRefundRequest(_message.Message):
    __slots__ = ["refund_id"]
    REFUND_ID_FIELD_NUMBER: _ClassVar[int]
    refund_id: str
    def __init__(self, refund_id: _Optional[str] = ...) -> None: ...

class ApproveRefundResponse(_message.Message):
    __slots__ = ["payout_info", "refund"]
    PAYOUT_INFO_FIELD_NUMBER: _ClassVar[int]
    REFUND_FIELD_NUMBER: _ClassVar[int]
    payout_info: _payout_pb2.PayoutInfo
    refund: RefundInfo
    def __init__(self, refund: _Optional[_Union[RefundInfo, _Mapping]] = ..., payout_info: _Optional[_Union[_payout_pb2.PayoutInfo, _Mapping]] = ...) -> None: ...

class ForwardWrongAssetRequest(_message.Message):
    __slots__ = ["coin", "txid_in"]
    COIN_FIELD_NUMBER: _ClassVar[int]
    TXID_IN_FIELD_NUMBER: _ClassVar[int]
    coin: str
    txid_in: str
    def __init__(self, coin: _Optional[str] = ..., txid_in: _Optional[str] = ...) -> None: ...

class ForwardWrongAssetResponse(_message.Message):
    __slots__ = ["payment_status", "txid_out", "value_forwarded_coin"]
    PAYMENT_STATUS_FIELD_NUMBER: _ClassVar[int]
    TXID_OUT_FIELD_NUMBER: _ClassVar[int]
    VALUE_FORWARDED_COIN_FIELD_NUMBER: _ClassVar[int]
    payment_status: str
    txid_out: str
    value_forwarded_coin: str
    def __init__(self, payment_status: _Optional[str] = ..., txid_out: _Optional[str] = ..., value_forwarded_coin: _Optional[str] = ...) -> None: ...

class GetRefundRequest(_message.Message):
    __slots__ = ["refund_id"]
    REFUND_ID_FIELD_NUMBER: _ClassVar[int]
    refund_id: str
    def __init__(self, refund_id: _Optional[str] = ...) -> None: ...

class GetRefundResponse(_message.Message):
    __slots__ = ["refund"]
    REFUND_FIELD_NUMBER: _ClassVar[int]
    refund: RefundInfo
    def __init__(self, refund: _Optional[_Union[RefundInfo, _Mapping]] = ...) -> None: ...

class RefundCheckoutRequest(_message.Message):
    __slots__ = ["address", "payment_id", "txid_in", "value"]
    ADDRESS_FIELD_NUMBER: _ClassVar[int]
    PAYMENT_ID_FIELD_NUMBER: _ClassVar[int]
    TXID_IN_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    address: str
    payment_id: str
    txid_in: str
    value: str
    def __init__(self, payment_id: _Optional[str] = ..., txid_in: _Optional[str] = ..., address: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...

class RefundCheckoutResponse(_message.Message):
    __slots__ = ["payout_info", "refund"]
    PAYOUT_INFO_FIELD_NUMBER: _ClassVar[int]
    REFUND_FIELD_NUMBER: _ClassVar[int]
    payout_info: _payout_pb2.PayoutInfo
    refund: RefundInfo
    def __init__(self, refund: _Optional[_Union[RefundInfo, _Mapping]] = ..., payout_info: _Optional[_Union[_payout_pb2.PayoutInfo, _Mapping]] = ...) -> None: ...

class RefundDepositRequest(_message.Message):
    __slots__ = ["address", "payment_id", "txid_in", "value"]
    ADDRESS_FIELD_NUMBER: _ClassVar[int]
    PAYMENT_ID_FIELD_NUMBER: _ClassVar[int]
    TXID_IN_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    address: str
    payment_id: str
    txid_in: str
    value: str
    def __init__(self, payment_id: _Optional[str] = ..., txid_in: _Optional[str] = ..., address: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...

class RefundDepositResponse(_message.Message):
    __slots__ = ["payout_info", "refund"]
    PAYOUT_INFO_FIELD_NUMBER: _ClassVar[int]
    REFUND_FIELD_NUMBER: _ClassVar[int]
    payout_info: _payout_pb2.PayoutInfo
    refund: RefundInfo
    def __init__(self, refund: _Optional[_Union[RefundInfo, _Mapping]] = ..., payout_info: _Optional[_Union[_payout_pb2.PayoutInfo, _Mapping]] = ...) -> None: ...

class RefundInfo(_message.Message):
    __slots__ = ["address", "coin", "error", "payment_id", "payout_id", "reason", "refund_id", "status", "timestamp", "txid", "txid_in", "value"]
    ADDRESS_FIELD_NUMBER: _ClassVar[int]
    COIN_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    PAYMENT_ID_FIELD_NUMBER: _ClassVar[int]
    PAYOUT_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    REFUND_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    TXID_FIELD_NUMBER: _ClassVar[int]
    TXID_IN_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    address: str
    coin: str
    error: str
    payment_id: str
    payout_id: int
    reason: str
    refund_id: str
    status: str
    timestamp: str
    txid: str
    txid_in: str
    value: str
    def __init__(self, refund_id: _Optional[str] = ..., status: _Optional[str] = ..., payment_id: _Optional[str] = ..., txid_in: _Optional[str] = ..., address: _Optional[str] = ..., value: _Optional[str] = ..., coin: _Optional[str] = ..., payout_id: _Optional[int] = ..., txid: _Optional[str] = ..., error: _Optional[str] = ..., timestamp: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class RefundWrongAssetRequest(_message.Message):
    __slots__ = ["address", "coin", "txid_in", "value"]
    ADDRESS_FIELD_NUMBER: _ClassVar[int]
    COIN_FIELD_NUMBER: _ClassVar[int]
    TXID_IN_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    address: str
    coin: str
    txid_in: str
    value: str
    def __init__(self, coin: _Optional[str] = ..., txid_in: _Optional[str] = ..., address: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...

class RefundWrongAssetResponse(_message.Message):
    __slots__ = ["payout_info"]
    PAYOUT_INFO_FIELD_NUMBER: _ClassVar[int]
    payout_info: _payout_pb2.PayoutInfo
    def __init__(self, payout_info: _Optional[_Union[_payout_pb2.PayoutInfo, _Mapping]] = ...) -> None: ...
