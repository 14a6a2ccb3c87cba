from buf.validate import validate_pb2 as _validate_pb2
from google.api import annotations_pb2 as _annotations_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from payhook.v1 import access_pb2 as _access_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class CallbackLog(_message.Message):
    __slots__ = ["confirmations", "deliveries", "last_update", "logs", "note", "payment_status", "txid_in", "txid_out", "value_coin", "value_forwarded_coin"]
    CONFIRMATIONS_FIELD_NUMBER: _ClassVar[int]
    DELIVERIES_FIELD_NUMBER: _ClassVar[int]
    LAST_UPDATE_FIELD_NUMBER: _ClassVar[int]
    LOGS_FIELD_NUMBER: _ClassVar[int]
    NOTE_FIELD_NUMBER: _ClassVar[int]
    PAYMENT_STATUS_FIELD_NUMBER: _ClassVar[int]
    TXID_IN_FIELD_NUMBER: _ClassVar[int]
    TXID_OUT_FIELD_NUMBER: _ClassVar[int]
    VALUE_COIN_FIELD_NUMBER: _ClassVar[int]
    VALUE_FORWARDED_COIN_FIELD_NUMBER: _ClassVar[int]
    confirmations: int
    deliveries: _containers.RepeatedCompositeFieldContainer[Delivery]
    last_update: _timestamp_pb2.Timestamp
    logs: _containers.RepeatedCompositeFieldContainer[DeliveryAttempt]
    note: str
    payment_status: str
    txid_in: str
    txid_out: str
    value_coin: str
    value_forwarded_coin: str
    def __init__(self, txid_in: _Optional[str] = ..., txid_out: _Optional[str] = ..., value_coin: _Optional[str] = ..., value_forwarded_coin: _Optional[str] = ..., confirmations: _Optional[int] = ..., payment_status: _Optional[str] = ..., last_update: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., logs: _Optional[_Iterable[_Union[DeliveryAttempt, _Mapping]]] = ..., deliveries: _Optional[_Iterable[_Union[Delivery, _Mapping]]] = ..., note: _Optional[str] = ...) -> None: ...

class CoinInfo(_message.Message):
    __slots__ = ["contract", "decimals", "default_confirmations", "family", "fee_rate", "minimum_confirmations", "minimum_transaction_coin", "network", "network_fee_estimation", "ticker", "ticker_path", "token"]
    CONTRACT_FIELD_NUMBER: _ClassVar[int]
    DECIMALS_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_CONFIRMATIONS_FIELD_NUMBER: _ClassVar[int]
    FAMILY_FIELD_NUMBER: _ClassVar[int]
    FEE_RATE_FIELD_NUMBER: _ClassVar[int]
    MINIMUM_CONFIRMATIONS_FIELD_NUMBER: _ClassVar[int]
    MINIMUM_TRANSACTION_COIN_FIELD_NUMBER: _ClassVar[int]
    NETWORK_FEE_ESTIMATION_FIELD_NUMBER: _ClassVar[int]
    NETWORK_FIELD_NUMBER: _ClassVar[int]
    TICKER_FIELD_NUMBER: _ClassVar[int]
    TICKER_PATH_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    contract: str
    decimals: int
    default_confirmations: int
    family: str
    fee_rate: str
    minimum_confirmations: int
    minimum_transaction_coin: str
    network: str
    network_fee_estimation: str
    ticker: str
    ticker_path: str
    token: bool
    def __init__(self, ticker: _Optional[str] = ..., network: _Optional[str] = ..., ticker_path: _Optional[str] = ..., family: _Optional[str] = ..., token: bool = ..., contract: _Optional[str] = ..., decimals: _Optional[int] = ..., default_confirmations: _Optional[int] = ..., minimum_confirmations: _Optional[int] = ..., minimum_transaction_coin: _Optional[str] = ..., fee_rate: _Optional[str] = ..., network_fee_estimation: _Optional[str] = ...) -> None: ...

class ConvertRequest(_message.Message):
    __slots__ = ["ticker", "value"]
    FROM_FIELD_NUMBER: _ClassVar[int]
    TICKER_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    ticker: str
    value: str
    def __init__(self, ticker: _Optional[str] = ..., value: _Optional[str] = ..., **kwargs) -> None: ...

class ConvertResponse(_message.Message):
    __slots__ = ["exchange_rate", "value_coin"]
    EXCHANGE_RATE_FIELD_NUMBER: _ClassVar[int]
    VALUE_COIN_FIELD_NUMBER: _ClassVar[int]
    exchange_rate: str
    value_coin: str
    def __init__(self, value_coin: _Optional[str] = ..., exchange_rate: _Optional[str] = ...) -> None: ...

class CreateAddressRequest(_message.Message):
    __slots__ = ["address", "callback", "cb_params", "confirmations", "convert", "json", "multi_chain", "multi_token", "pending", "post", "priority", "ticker"]
    ADDRESS_FIELD_NUMBER: _ClassVar[int]
    CALLBACK_FIELD_NUMBER: _ClassVar[int]
    CB_PARAMS_FIELD_NUMBER: _ClassVar[int]
    CONFIRMATIONS_FIELD_NUMBER: _ClassVar[int]
    CONVERT_FIELD_NUMBER: _ClassVar[int]
    JSON_FIELD_NUMBER: _ClassVar[int]
    MULTI_CHAIN_FIELD_NUMBER: _ClassVar[int]
    MULTI_TOKEN_FIELD_NUMBER: _ClassVar[int]
    PENDING_FIELD_NUMBER: _ClassVar[int]
    POST_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    TICKER_FIELD_NUMBER: _ClassVar[int]
    address: str
    callback: str
    cb_params: str
    confirmations: int
    convert: bool
    json: bool
    multi_chain: bool
    multi_token: bool
    pending: str
    post: bool
    priority: str
    ticker: str
    def __init__(self, ticker: _Optional[str] = ..., callback: _Optional[str] = ..., cb_params: _Optional[str] = ..., address: _Optional[str] = ..., confirmations: _Optional[int] = ..., post: bool = ..., json: bool = ..., convert: bool = ..., pending: _Optional[str] = ..., priority: _Optional[str] = ..., multi_token: bool = ..., multi_chain: bool = ...) -> None: ...

class CreateAddressResponse(_message.Message):
    __slots__ = ["address_in", "address_out", "callback_url", "minimum_transaction_coin", "priority", "required_confirmations"]
    class AddressOutEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    ADDRESS_IN_FIELD_NUMBER: _ClassVar[int]
    ADDRESS_OUT_FIELD_NUMBER: _ClassVar[int]
    CALLBACK_URL_FIELD_NUMBER: _ClassVar[int]
    MINIMUM_TRANSACTION_COIN_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    REQUIRED_CONFIRMATIONS_FIELD_NUMBER: _ClassVar[int]
    address_in: str
    address_out: _containers.ScalarMap[str, float]
    callback_url: str
    minimum_transaction_coin: str
    priority: str
    required_confirmations: int
    def __init__(self, address_in: _Optional[str] = ..., address_out: _Optional[_Mapping[str, float]] = ..., callback_url: _Optional[str] = ..., minimum_transaction_coin: _Optional[str] = ..., priority: _Optional[str] = ..., required_confirmations: _Optional[int] = ...) -> None: ...

class CreatePayoutRequest(_message.Message):
    __slots__ = ["address", "ticker", "value"]
    ADDRESS_FIELD_NUMBER: _ClassVar[int]
    TICKER_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    address: str
    ticker: str
    value: str
    def __init__(self, ticker: _Optional[str] = ..., address: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...

class CreatePayoutResponse(_message.Message):
    __slots__ = ["address", "created_at", "payout_id", "payout_status", "value"]
    ADDRESS_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    PAYOUT_ID_FIELD_NUMBER: _ClassVar[int]
    PAYOUT_STATUS_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    address: str
    created_at: _timestamp_pb2.Timestamp
    payout_id: str
    payout_status: str
    value: str
    def __init__(self, payout_id: _Optional[str] = ..., payout_status: _Optional[str] = ..., address: _Optional[str] = ..., value: _Optional[str] = ..., created_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class Delivery(_message.Message):
    __slots__ = ["attempts", "created_at", "expires_at", "next_attempt_at", "payment_status", "status", "uuid"]
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    NEXT_ATTEMPT_AT_FIELD_NUMBER: _ClassVar[int]
    PAYMENT_STATUS_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    UUID_FIELD_NUMBER: _ClassVar[int]
    attempts: int
    created_at: _timestamp_pb2.Timestamp
    expires_at: _timestamp_pb2.Timestamp
    next_attempt_at: _timestamp_pb2.Timestamp
    payment_status: str
    status: str
    uuid: str
    def __init__(self, uuid: _Optional[str] = ..., payment_status: _Optional[str] = ..., status: _Optional[str] = ..., attempts: _Optional[int] = ..., next_attempt_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., expires_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., created_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class DeliveryAttempt(_message.Message):
    __slots__ = ["attempt", "duration_ms", "error", "finished_at", "next_attempt_at", "outcome", "payment_status", "request_method", "request_url", "response_body", "response_status", "started_at", "uuid"]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    FINISHED_AT_FIELD_NUMBER: _ClassVar[int]
    NEXT_ATTEMPT_AT_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    PAYMENT_STATUS_FIELD_NUMBER: _ClassVar[int]
    REQUEST_METHOD_FIELD_NUMBER: _ClassVar[int]
    REQUEST_URL_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_BODY_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_STATUS_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    UUID_FIELD_NUMBER: _ClassVar[int]
    attempt: int
    duration_ms: int
    error: str
    finished_at: _timestamp_pb2.Timestamp
    next_attempt_at: _timestamp_pb2.Timestamp
    outcome: str
    payment_status: str
    request_method: str
    request_url: str
    response_body: str
    response_status: int
    started_at: _timestamp_pb2.Timestamp
    uuid: str
    def __init__(self, uuid: _Optional[str] = ..., attempt: _Optional[int] = ..., payment_status: _Optional[str] = ..., request_method: _Optional[str] = ..., request_url: _Optional[str] = ..., started_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., finished_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., response_status: _Optional[int] = ..., response_body: _Optional[str] = ..., error: _Optional[str] = ..., outcome: _Optional[str] = ..., duration_ms: _Optional[int] = ..., next_attempt_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class EstimateFeeRequest(_message.Message):
    __slots__ = ["addresses", "priority", "ticker"]
    ADDRESSES_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    TICKER_FIELD_NUMBER: _ClassVar[int]
    addresses: int
    priority: str
    ticker: str
    def __init__(self, ticker: _Optional[str] = ..., addresses: _Optional[int] = ..., priority: _Optional[str] = ...) -> None: ...

class EstimateFeeResponse(_message.Message):
    __slots__ = ["estimated_cost", "estimated_cost_currency"]
    class EstimatedCostCurrencyEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    ESTIMATED_COST_CURRENCY_FIELD_NUMBER: _ClassVar[int]
    ESTIMATED_COST_FIELD_NUMBER: _ClassVar[int]
    estimated_cost: str
    estimated_cost_currency: _containers.ScalarMap[str, str]
    def __init__(self, estimated_cost: _Optional[str] = ..., estimated_cost_currency: _Optional[_Mapping[str, str]] = ...) -> None: ...

class GetInfoRequest(_message.Message):
    __slots__ = ["ticker"]
    TICKER_FIELD_NUMBER: _ClassVar[int]
    ticker: str
    def __init__(self, ticker: _Optional[str] = ...) -> None: ...

class GetInfoResponse(_message.Message):
    __slots__ = ["coins"]
    COINS_FIELD_NUMBER: _ClassVar[int]
    coins: _containers.RepeatedCompositeFieldContainer[CoinInfo]
    def __init__(self, coins: _Optional[_Iterable[_Union[CoinInfo, _Mapping]]] = ...) -> None: ...

class GetLogsRequest(_message.Message):
    __slots__ = ["callback", "ticker"]
    CALLBACK_FIELD_NUMBER: _ClassVar[int]
    TICKER_FIELD_NUMBER: _ClassVar[int]
    callback: str
    ticker: str
    def __init__(self, ticker: _Optional[str] = ..., callback: _Optional[str] = ...) -> None: ...

class GetLogsResponse(_message.Message):
    __slots__ = ["address_in", "address_out", "callback_url", "callbacks", "notify_confirmations"]
    class AddressOutEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    ADDRESS_IN_FIELD_NUMBER: _ClassVar[int]
    ADDRESS_OUT_FIELD_NUMBER: _ClassVar[int]
    CALLBACKS_FIELD_NUMBER: _ClassVar[int]
    CALLBACK_URL_FIELD_NUMBER: _ClassVar[int]
    NOTIFY_CONFIRMATIONS_FIELD_NUMBER: _ClassVar[int]
    address_in: str
    address_out: _containers.ScalarMap[str, float]
    callback_url: str
    callbacks: _containers.RepeatedCompositeFieldContainer[CallbackLog]
    notify_confirmations: int
    def __init__(self, callback_url: _Optional[str] = ..., address_in: _Optional[str] = ..., address_out: _Optional[_Mapping[str, float]] = ..., notify_confirmations: _Optional[int] = ..., callbacks: _Optional[_Iterable[_Union[CallbackLog, _Mapping]]] = ...) -> None: ...

class GetPublicKeyRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class GetPublicKeyResponse(_message.Message):
    __slots__ = ["previous_pubkey", "previous_until", "pubkey"]
    PREVIOUS_PUBKEY_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_UNTIL_FIELD_NUMBER: _ClassVar[int]
    PUBKEY_FIELD_NUMBER: _ClassVar[int]
    previous_pubkey: str
    previous_until: _timestamp_pb2.Timestamp
    pubkey: str
    def __init__(self, pubkey: _Optional[str] = ..., previous_pubkey: _Optional[str] = ..., previous_until: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class GetQrCodeRequest(_message.Message):
    __slots__ = ["address", "size", "ticker", "value"]
    ADDRESS_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    TICKER_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    address: str
    size: int
    ticker: str
    value: str
    def __init__(self, ticker: _Optional[str] = ..., address: _Optional[str] = ..., value: _Optional[str] = ..., size: _Optional[int] = ...) -> None: ...

class GetQrCodeResponse(_message.Message):
    __slots__ = ["payment_uri", "qr_code"]
    PAYMENT_URI_FIELD_NUMBER: _ClassVar[int]
    QR_CODE_FIELD_NUMBER: _ClassVar[int]
    payment_uri: str
    qr_code: str
    def __init__(self, qr_code: _Optional[str] = ..., payment_uri: _Optional[str] = ...) -> None: ...
