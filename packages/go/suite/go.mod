module example.com/kitsuite

go 1.25.0

require (
	github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus v1.11.0
	github.com/busbar-rs/busbar/packages/go/busbartest v0.0.0
)
