from buf.validate import validate_pb2 as _validate_pb2
from google.api import annotations_pb2 as _annotations_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from payhook.v1 import access_pb2 as _access_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class CreateSubscriptionRequest(_message.Message):
    __slots__ = ["currency", "customer", "json", "notify_url", "option", "post"]
    CURRENCY_FIELD_NUMBER: _ClassVar[int]
    CUSTOMER_FIELD_NUMBER: _ClassVar[int]
    JSON_FIELD_NUMBER: _ClassVar[int]
    NOTIFY_URL_FIELD_NUMBER: _ClassVar[int]
    OPTION_FIELD_NUMBER: _ClassVar[int]
    POST_FIELD_NUMBER: _ClassVar[int]
    currency: str
    customer: str
    json: bool
    notify_url: str
    option: _containers.RepeatedScalarFieldContainer[str]
    post: bool
    def __init__(self, notify_url: _Optional[str] = ..., currency: _Optional[str] = ..., option: _Optional[_Iterable[str]] = ..., customer: _Optional[str] = ..., post: bool = ..., json: bool = ...) -> None: ...

class CreateSubscriptionResponse(_message.Message):
    __slots__ = ["subscription_url", "token"]
    SUBSCRIPTION_URL_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    subscription_url: str
    token: str
    def __init__(self, token: _Optional[str] = ..., subscription_url: _Optional[str] = ...) -> None: ...

class FetchSubscriptionRequest(_message.Message):
    __slots__ = ["token"]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    token: str
    def __init__(self, token: _Optional[str] = ...) -> None: ...

class FetchSubscriptionResponse(_message.Message):
    __slots__ = ["subscription"]
    SUBSCRIPTION_FIELD_NUMBER: _ClassVar[int]
    subscription: Subscription
    def __init__(self, subscription: _Optional[_Union[Subscription, _Mapping]] = ...) -> None: ...

class GetSubscriptionAddressRequest(_message.Message):
    __slots__ = ["coin", "option", "token"]
    COIN_FIELD_NUMBER: _ClassVar[int]
    OPTION_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    coin: str
    option: str
    token: str
    def __init__(self, token: _Optional[str] = ..., coin: _Optional[str] = ..., option: _Optional[str] = ...) -> None: ...

class GetSubscriptionAddressResponse(_message.Message):
    __slots__ = ["address_in", "coin", "currency", "exchange_rate", "expires_at", "minimum_transaction_coin", "option", "payment_id", "payment_uri", "value", "value_coin"]
    ADDRESS_IN_FIELD_NUMBER: _ClassVar[int]
    COIN_FIELD_NUMBER: _ClassVar[int]
    CURRENCY_FIELD_NUMBER: _ClassVar[int]
    EXCHANGE_RATE_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    MINIMUM_TRANSACTION_COIN_FIELD_NUMBER: _ClassVar[int]
    OPTION_FIELD_NUMBER: _ClassVar[int]
    PAYMENT_ID_FIELD_NUMBER: _ClassVar[int]
    PAYMENT_URI_FIELD_NUMBER: _ClassVar[int]
    VALUE_COIN_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    address_in: str
    coin: str
    currency: str
    exchange_rate: str
    expires_at: int
    minimum_transaction_coin: str
    option: str
    payment_id: str
    payment_uri: str
    value: str
    value_coin: str
    def __init__(self, address_in: _Optional[str] = ..., coin: _Optional[str] = ..., value_coin: _Optional[str] = ..., exchange_rate: _Optional[str] = ..., currency: _Optional[str] = ..., expires_at: _Optional[int] = ..., payment_uri: _Optional[str] = ..., minimum_transaction_coin: _Optional[str] = ..., payment_id: _Optional[str] = ..., option: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...

class ListSubscriptionsRequest(_message.Message):
    __slots__ = ["cursor", "limit"]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    cursor: str
    limit: int
    def __init__(self, limit: _Optional[int] = ..., cursor: _Optional[str] = ...) -> None: ...

class ListSubscriptionsResponse(_message.Message):
    __slots__ = ["next_cursor", "subscriptions"]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    SUBSCRIPTIONS_FIELD_NUMBER: _ClassVar[int]
    next_cursor: str
    subscriptions: _containers.RepeatedCompositeFieldContainer[Subscription]
    def __init__(self, subscriptions: _Optional[_Iterable[_Union[Subscription, _Mapping]]] = ..., next_cursor: _Optional[str] = ...) -> None: ...

class Subscription(_message.Message):
    __slots__ = ["created_at", "currency", "customer", "expires_at", "notify_url", "options", "payment_list", "status", "token"]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    CURRENCY_FIELD_NUMBER: _ClassVar[int]
    CUSTOMER_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    NOTIFY_URL_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    PAYMENT_LIST_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    created_at: int
    currency: str
    customer: str
    expires_at: int
    notify_url: str
    options: _containers.RepeatedCompositeFieldContainer[SubscriptionOption]
    payment_list: _containers.RepeatedCompositeFieldContainer[SubscriptionPayment]
    status: str
    token: str
    def __init__(self, token: _Optional[str] = ..., status: _Optional[str] = ..., expires_at: _Optional[int] = ..., currency: _Optional[str] = ..., customer: _Optional[str] = ..., notify_url: _Optional[str] = ..., options: _Optional[_Iterable[_Union[SubscriptionOption, _Mapping]]] = ..., created_at: _Optional[int] = ..., payment_list: _Optional[_Iterable[_Union[SubscriptionPayment, _Mapping]]] = ...) -> None: ...

class SubscriptionOption(_message.Message):
    __slots__ = ["period", "value"]
    PERIOD_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    period: str
    value: str
    def __init__(self, period: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...

class SubscriptionPayment(_message.Message):
    __slots__ = ["coin", "option", "payment_id", "received_fiat", "status", "time", "txid", "value"]
    COIN_FIELD_NUMBER: _ClassVar[int]
    OPTION_FIELD_NUMBER: _ClassVar[int]
    PAYMENT_ID_FIELD_NUMBER: _ClassVar[int]
    RECEIVED_FIAT_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    TXID_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    coin: str
    option: str
    payment_id: str
    received_fiat: _struct_pb2.Value
    status: str
    time: int
    txid: str
    value: _struct_pb2.Value
    def __init__(self, payment_id: _Optional[str] = ..., option: _Optional[str] = ..., value: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., received_fiat: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., coin: _Optional[str] = ..., txid: _Optional[str] = ..., status: _Optional[str] = ..., time: _Optional[int] = ...) -> None: ...
