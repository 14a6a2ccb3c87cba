from buf.validate import validate_pb2 as _validate_pb2
from google.api import annotations_pb2 as _annotations_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from payhook.v1 import access_pb2 as _access_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class CreateProjectRequest(_message.Message):
    __slots__ = ["apikey_scopes", "confirmations", "currency", "name", "tickers", "wallets"]
    APIKEY_SCOPES_FIELD_NUMBER: _ClassVar[int]
    CONFIRMATIONS_FIELD_NUMBER: _ClassVar[int]
    CURRENCY_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    TICKERS_FIELD_NUMBER: _ClassVar[int]
    WALLETS_FIELD_NUMBER: _ClassVar[int]
    apikey_scopes: _containers.RepeatedScalarFieldContainer[str]
    confirmations: _containers.RepeatedScalarFieldContainer[str]
    currency: str
    name: str
    tickers: _containers.RepeatedScalarFieldContainer[str]
    wallets: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, name: _Optional[str] = ..., currency: _Optional[str] = ..., wallets: _Optional[_Iterable[str]] = ..., tickers: _Optional[_Iterable[str]] = ..., confirmations: _Optional[_Iterable[str]] = ..., apikey_scopes: _Optional[_Iterable[str]] = ...) -> None: ...

class CreateProjectResponse(_message.Message):
    __slots__ = ["apikey", "apikey_scopes", "ipn_secret", "project_id"]
    APIKEY_FIELD_NUMBER: _ClassVar[int]
    APIKEY_SCOPES_FIELD_NUMBER: _ClassVar[int]
    IPN_SECRET_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    apikey: str
    apikey_scopes: _containers.RepeatedScalarFieldContainer[str]
    ipn_secret: str
    project_id: int
    def __init__(self, project_id: _Optional[int] = ..., apikey: _Optional[str] = ..., ipn_secret: _Optional[str] = ..., apikey_scopes: _Optional[_Iterable[str]] = ...) -> None: ...

class ListProjectsRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class ListProjectsResponse(_message.Message):
    __slots__ = ["projects"]
    PROJECTS_FIELD_NUMBER: _ClassVar[int]
    projects: _containers.RepeatedCompositeFieldContainer[Project]
    def __init__(self, projects: _Optional[_Iterable[_Union[Project, _Mapping]]] = ...) -> None: ...

class Project(_message.Message):
    __slots__ = ["confirmations", "created_at", "currency", "late_payments", "name", "payout_notify_post", "payout_notify_url", "project_id", "rate_burst", "rate_limit", "secret_rotating", "tickers", "underpaid_tolerance", "wallets"]
    class ConfirmationsEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    CONFIRMATIONS_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    CURRENCY_FIELD_NUMBER: _ClassVar[int]
    LATE_PAYMENTS_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PAYOUT_NOTIFY_POST_FIELD_NUMBER: _ClassVar[int]
    PAYOUT_NOTIFY_URL_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    RATE_BURST_FIELD_NUMBER: _ClassVar[int]
    RATE_LIMIT_FIELD_NUMBER: _ClassVar[int]
    SECRET_ROTATING_FIELD_NUMBER: _ClassVar[int]
    TICKERS_FIELD_NUMBER: _ClassVar[int]
    UNDERPAID_TOLERANCE_FIELD_NUMBER: _ClassVar[int]
    WALLETS_FIELD_NUMBER: _ClassVar[int]
    confirmations: _containers.ScalarMap[str, int]
    created_at: _timestamp_pb2.Timestamp
    currency: str
    late_payments: str
    name: str
    payout_notify_post: bool
    payout_notify_url: str
    project_id: int
    rate_burst: int
    rate_limit: float
    secret_rotating: bool
    tickers: _containers.RepeatedScalarFieldContainer[str]
    underpaid_tolerance: str
    wallets: _containers.RepeatedCompositeFieldContainer[ProjectWallet]
    def __init__(self, project_id: _Optional[int] = ..., name: _Optional[str] = ..., currency: _Optional[str] = ..., wallets: _Optional[_Iterable[_Union[ProjectWallet, _Mapping]]] = ..., created_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., secret_rotating: bool = ..., tickers: _Optional[_Iterable[str]] = ..., confirmations: _Optional[_Mapping[str, int]] = ..., payout_notify_url: _Optional[str] = ..., payout_notify_post: bool = ..., underpaid_tolerance: _Optional[str] = ..., late_payments: _Optional[str] = ..., rate_limit: _Optional[float] = ..., rate_burst: _Optional[int] = ...) -> None: ...

class ProjectWallet(_message.Message):
    __slots__ = ["address", "share", "ticker"]
    ADDRESS_FIELD_NUMBER: _ClassVar[int]
    SHARE_FIELD_NUMBER: _ClassVar[int]
    TICKER_FIELD_NUMBER: _ClassVar[int]
    address: str
    share: str
    ticker: str
    def __init__(self, ticker: _Optional[str] = ..., address: _Optional[str] = ..., share: _Optional[str] = ...) -> None: ...

class RemoveWalletRequest(_message.Message):
    __slots__ = ["project_id", "ticker"]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    TICKER_FIELD_NUMBER: _ClassVar[int]
    project_id: int
    ticker: str
    def __init__(self, project_id: _Optional[int] = ..., ticker: _Optional[str] = ...) -> None: ...

class RemoveWalletResponse(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class RotateSecretRequest(_message.Message):
    __slots__ = ["grace_seconds", "project_id"]
    GRACE_SECONDS_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    grace_seconds: int
    project_id: int
    def __init__(self, project_id: _Optional[int] = ..., grace_seconds: _Optional[int] = ...) -> None: ...

class RotateSecretResponse(_message.Message):
    __slots__ = ["ipn_secret"]
    IPN_SECRET_FIELD_NUMBER: _ClassVar[int]
    ipn_secret: str
    def __init__(self, ipn_secret: _Optional[str] = ...) -> None: ...

class SetPaymentExceptionsRequest(_message.Message):
    __slots__ = ["auto_refund_overpaid", "late_payments", "project_id", "underpaid_tolerance"]
    AUTO_REFUND_OVERPAID_FIELD_NUMBER: _ClassVar[int]
    LATE_PAYMENTS_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    UNDERPAID_TOLERANCE_FIELD_NUMBER: _ClassVar[int]
    auto_refund_overpaid: bool
    late_payments: str
    project_id: int
    underpaid_tolerance: str
    def __init__(self, project_id: _Optional[int] = ..., underpaid_tolerance: _Optional[str] = ..., late_payments: _Optional[str] = ..., auto_refund_overpaid: bool = ...) -> None: ...

class SetPaymentExceptionsResponse(_message.Message):
    __slots__ = ["auto_refund_overpaid", "late_payments", "underpaid_tolerance"]
    AUTO_REFUND_OVERPAID_FIELD_NUMBER: _ClassVar[int]
    LATE_PAYMENTS_FIELD_NUMBER: _ClassVar[int]
    UNDERPAID_TOLERANCE_FIELD_NUMBER: _ClassVar[int]
    auto_refund_overpaid: bool
    late_payments: str
    underpaid_tolerance: str
    def __init__(self, underpaid_tolerance: _Optional[str] = ..., late_payments: _Optional[str] = ..., auto_refund_overpaid: bool = ...) -> None: ...

class SetPayoutLimitRequest(_message.Message):
    __slots__ = ["per_day", "per_payout", "project_id", "ticker"]
    PER_DAY_FIELD_NUMBER: _ClassVar[int]
    PER_PAYOUT_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    TICKER_FIELD_NUMBER: _ClassVar[int]
    per_day: str
    per_payout: str
    project_id: int
    ticker: str
    def __init__(self, project_id: _Optional[int] = ..., ticker: _Optional[str] = ..., per_payout: _Optional[str] = ..., per_day: _Optional[str] = ...) -> None: ...

class SetPayoutLimitResponse(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class SetPayoutNotifyRequest(_message.Message):
    __slots__ = ["get", "payout_notify_url", "project_id"]
    GET_FIELD_NUMBER: _ClassVar[int]
    PAYOUT_NOTIFY_URL_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    get: bool
    payout_notify_url: str
    project_id: int
    def __init__(self, project_id: _Optional[int] = ..., payout_notify_url: _Optional[str] = ..., get: bool = ...) -> None: ...

class SetPayoutNotifyResponse(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class SetRateLimitRequest(_message.Message):
    __slots__ = ["project_id", "rate_burst", "rate_limit"]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    RATE_BURST_FIELD_NUMBER: _ClassVar[int]
    RATE_LIMIT_FIELD_NUMBER: _ClassVar[int]
    project_id: int
    rate_burst: int
    rate_limit: float
    def __init__(self, project_id: _Optional[int] = ..., rate_limit: _Optional[float] = ..., rate_burst: _Optional[int] = ...) -> None: ...

class SetRateLimitResponse(_message.Message):
    __slots__ = ["rate_burst", "rate_limit"]
    RATE_BURST_FIELD_NUMBER: _ClassVar[int]
    RATE_LIMIT_FIELD_NUMBER: _ClassVar[int]
    rate_burst: int
    rate_limit: float
    def __init__(self, rate_limit: _Optional[float] = ..., rate_burst: _Optional[int] = ...) -> None: ...

class SetWalletRequest(_message.Message):
    __slots__ = ["project_id", "wallet"]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    WALLET_FIELD_NUMBER: _ClassVar[int]
    project_id: int
    wallet: str
    def __init__(self, project_id: _Optional[int] = ..., wallet: _Optional[str] = ...) -> None: ...

class SetWalletResponse(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...
