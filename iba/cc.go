package iba

// Congestion control (IBA annex A10): the CongestionCtl class 0x21, its MAD
// format and attributes. Offsets and the names ibccquery prints (the
// labels) are those of libibmad fields.c; OpenSM's ib_types.h agrees except
// where a doc comment below says otherwise.

// CCFormat is the Congestion Control MAD format (IBA A10.4.1): the common
// MAD header, the CC_Key that protects Set, a 32-byte area and 192 bytes of
// attribute data. Only CongestionLog uses the 32-byte area: its data starts
// at LogData and runs on into Data (IBA A10.4.3.5); every other attribute
// starts at Data, the 32 bytes before it being reserved.
//
//iba:format class=0x21 version=2
type CCFormat struct {
	MADHeader `iba:"off=0"`
	CCKey     uint64    `iba:"off=192,bits=64,hex,label=CC_Key"`
	LogData   [32]byte  `iba:"off=256"`
	Data      [192]byte `iba:"off=512,data"`
}

// CongestionInfo is the Congestion Info attribute (IBA A10.4.3.3): what
// congestion control the node supports and how many 64-entry blocks its
// CongestionControlTable has.
//
//iba:attr id=0x11 methods=CongestionGet
type CongestionInfo struct {
	CongestionInfo  uint16 `iba:"off=0,bits=16,hex,label=CongestionInfo"`
	ControlTableCap uint8  `iba:"off=16,bits=8,label=ControlTableCap"`
	_               uint8  `iba:"off=24,bits=8"`
}

// CongestionKeyInfo is the Congestion Key Info attribute (IBA A10.4.3.4):
// the CC_Key, its protection and lease, and the count of MADs that failed
// the check.
//
//iba:attr id=0x12 methods=CongestionGet,CongestionSet
type CongestionKeyInfo struct {
	CCKey            uint64 `iba:"off=0,bits=64,hex,label=CC_Key"`
	CCKeyProtectBit  uint8  `iba:"off=64,bits=1,label=CC_KeyProtectBit"`
	_                uint16 `iba:"off=65,bits=15"`
	CCKeyLeasePeriod uint16 `iba:"off=80,bits=16,label=CC_KeyLeasePeriod"`
	CCKeyViolations  uint16 `iba:"off=96,bits=16,label=CC_KeyViolations"`
}

// CongestionLog is the Congestion Log attribute (IBA A10.4.3.5) as far as
// switches and channel adapters share it: LogType says which layout the
// rest has (1: CongestionLogSwitch, 2: CongestionLogCA). Its 220 bytes
// start at byte 32 of the MAD (CCFormat.LogData), not at CCFormat.Data.
//
//iba:attr id=0x13 methods=CongestionGet dataoff=256
type CongestionLog struct {
	LogType         uint8     `iba:"off=0,bits=8,label=LogType"`
	CongestionFlags uint8     `iba:"off=8,bits=8,hex,label=CongestionFlags"`
	LogDetails      [218]byte `iba:"off=16"`
}

// CongestionLogSwitch is the Congestion Log of a switch (IBA A10.4.3.5)
// with LogType 1: the ports that marked FECNs and the fifteen most recent
// congestion events. It is a layout of attribute 0x13: query
// CongestionLog and decode the reply with this type when LogType is 1.
//
//iba:attr id=0x13 variant=CongestionLog dataoff=256
type CongestionLogSwitch struct {
	LogType          uint8                    `iba:"off=0,bits=8,label=LogType"`
	CongestionFlags  uint8                    `iba:"off=8,bits=8,hex,label=CongestionFlags"`
	LogEventsCounter uint16                   `iba:"off=16,bits=16,label=LogEventsCounter"`
	CurrentTimeStamp uint32                   `iba:"off=32,bits=32,label=CurrentTimeStamp"`
	PortMap          [32]byte                 `iba:"off=64,label=PortMap"`
	EntryList        [15]CongestionLogEventSW `iba:"off=320"`
}

// CongestionLogEventSW is one congestion event in a switch's log
// (IBA A10.4.3.5).
type CongestionLogEventSW struct {
	SLID      uint16 `iba:"off=0,bits=16,label=SLID"`
	DLID      uint16 `iba:"off=16,bits=16,label=DLID"`
	SL        uint8  `iba:"off=32,bits=4,label=SL"`
	_         uint32 `iba:"off=36,bits=28"`
	Timestamp uint32 `iba:"off=64,bits=32,label=Timestamp"`
}

// CongestionLogCA is the Congestion Log of a channel adapter
// (IBA A10.4.3.5) with LogType 2: the SLs whose CCTI reached the trigger
// threshold and the thirteen most recent such events. It is a layout of
// attribute 0x13: query CongestionLog and decode the reply with this type
// when LogType is 2. CurrentTimeStamp is at bit 64 as libibmad reads it;
// the Q3/2010 errata put it at 48, which would leave it unaligned.
//
//iba:attr id=0x13 variant=CongestionLog dataoff=256
type CongestionLogCA struct {
	LogType                     uint8                    `iba:"off=0,bits=8,label=LogType"`
	CongestionFlags             uint8                    `iba:"off=8,bits=8,hex,label=CongestionFlags"`
	ThresholdEventCounter       uint16                   `iba:"off=16,bits=16,label=ThresholdEventCounter"`
	ThresholdCongestionEventMap uint16                   `iba:"off=32,bits=16,hex,label=ThresholdCongestionEventMap"`
	_                           uint16                   `iba:"off=48,bits=16"`
	CurrentTimeStamp            uint32                   `iba:"off=64,bits=32,label=CurrentTimeStamp"`
	EntryList                   [13]CongestionLogEventCA `iba:"off=96"`
}

// CongestionLogEventCA is one event in a channel adapter's congestion log
// (IBA A10.4.3.5), laid out as libibmad and ibccquery read it. OpenSM's
// ib_types.h instead puts the remote QP, SL and service type together in
// the second word and has no local LID; the labels here are ibccquery's.
type CongestionLogEventCA struct {
	LocalQPCNEntry        uint32 `iba:"off=0,bits=24,label=Local_QP_CN_Entry"`
	SLCNEntry             uint8  `iba:"off=24,bits=4,label=SL_CN_Entry"`
	ServiceTypeCNEntry    uint8  `iba:"off=28,bits=4,hex,label=Service_Type_CN_Entry"`
	RemoteQPNumberCNEntry uint32 `iba:"off=32,bits=24,label=Remote_QP_Number_CN_Entry"`
	_                     uint8  `iba:"off=56,bits=8"`
	LocalLIDCN            uint16 `iba:"off=64,bits=16,label=Local_LID_CN"`
	RemoteLIDCNEntry      uint16 `iba:"off=80,bits=16,label=Remote_LID_CN_Entry"`
	TimestampCNEntry      uint32 `iba:"off=96,bits=32,label=Timestamp_CN_Entry"`
}

// SwitchCongestionSetting is the Switch Congestion Setting attribute
// (IBA A10.4.3.6): which ports mark FECNs (VictimMask) and apply credit
// starvation (CreditMask), and how aggressively. ControlMap says which
// components a Set changes.
//
//iba:attr id=0x14 methods=CongestionGet,CongestionSet
type SwitchCongestionSetting struct {
	ControlMap    uint32   `iba:"off=0,bits=32,hex,label=Control_Map"`
	VictimMask    [32]byte `iba:"off=32,label=Victim_Mask"`
	CreditMask    [32]byte `iba:"off=288,label=Credit_Mask"`
	Threshold     uint8    `iba:"off=544,bits=4,hex,label=Threshold"`
	_             uint8    `iba:"off=548,bits=4"`
	PacketSize    uint8    `iba:"off=552,bits=8,label=Packet_Size"`
	CSThreshold   uint8    `iba:"off=560,bits=4,hex,label=CS_Threshold"`
	_             uint16   `iba:"off=564,bits=12"`
	CSReturnDelay uint16   `iba:"off=576,bits=16,hex,label=CS_ReturnDelay"`
	MarkingRate   uint16   `iba:"off=592,bits=16,label=Marking_Rate"`
}

// SwitchPortCongestionSetting is the Switch Port Congestion Setting
// attribute (IBA A10.4.3.7): one block of 32 ports, the attribute modifier
// being the block number, as OpenSM's ib_types.h declares it. (ibccquery
// instead reads 48 elements per block.)
//
//iba:attr id=0x15 methods=CongestionGet,CongestionSet
type SwitchPortCongestionSetting struct {
	Block [32]SwitchPortCongestionSettingElement `iba:"off=0"`
}

// SwitchPortCongestionSettingElement is the congestion setting of one
// switch port (IBA A10.4.3.7). ControlType 0 sets congestion control
// (Threshold, PacketSize and CongParmMarkingRate); 1 sets credit
// starvation, Threshold then being CS_Threshold.
type SwitchPortCongestionSettingElement struct {
	Valid               uint8  `iba:"off=0,bits=1,label=Valid"`
	ControlType         uint8  `iba:"off=1,bits=1,label=Control_Type"`
	_                   uint8  `iba:"off=2,bits=2"`
	Threshold           uint8  `iba:"off=4,bits=4,hex,label=Threshold"`
	PacketSize          uint8  `iba:"off=8,bits=8,label=Packet_Size"`
	CongParmMarkingRate uint16 `iba:"off=16,bits=16,label=Cong_Parm_Marking_Rate"`
}

// CACongestionSetting is the CA Congestion Setting attribute
// (IBA A10.4.3.8): the reaction of a channel adapter port to BECNs, one
// entry per SL. ControlMap has one bit per SL saying which entries a Set
// changes.
//
//iba:attr id=0x16 methods=CongestionGet,CongestionSet
type CACongestionSetting struct {
	PortControl uint16                `iba:"off=0,bits=16,hex,label=Port_Control"`
	ControlMap  uint16                `iba:"off=16,bits=16,hex,label=Control_Map"`
	EntryList   [16]CACongestionEntry `iba:"off=32"`
}

// CACongestionEntry is the congestion setting of one SL of a channel
// adapter port (IBA A10.4.3.8).
type CACongestionEntry struct {
	CCTITimer        uint16 `iba:"off=0,bits=16,label=CCTI_Timer"`
	CCTIIncrease     uint8  `iba:"off=16,bits=8,label=CCTI_Increase"`
	TriggerThreshold uint8  `iba:"off=24,bits=8,label=Trigger_Threshold"`
	CCTIMin          uint8  `iba:"off=32,bits=8,label=CCTI_Min"`
	_                uint32 `iba:"off=40,bits=24"`
}

// CongestionControlTable is the Congestion Control Table attribute
// (IBA A10.4.3.9): one block of 64 injection-rate delays, the attribute
// modifier being the block number. CCTILimit is the largest valid index
// of the whole table.
//
//iba:attr id=0x17 methods=CongestionGet,CongestionSet
type CongestionControlTable struct {
	CCTILimit uint16                          `iba:"off=0,bits=16,label=CCTI_Limit"`
	_         uint16                          `iba:"off=16,bits=16"`
	EntryList [64]CongestionControlTableEntry `iba:"off=32"`
}

// CongestionControlTableEntry is one injection-rate delay of the
// CongestionControlTable (IBA A10.4.3.9): CCTMultiplier shifted by
// CCTShift.
type CongestionControlTableEntry struct {
	CCTShift      uint8  `iba:"off=0,bits=2,label=CCT_Shift"`
	CCTMultiplier uint16 `iba:"off=2,bits=14,label=CCT_Multiplier"`
}

// TimeStamp is the TimeStamp attribute (IBA A10.4.3.10): a free-running
// clock in units of 1.024 microseconds, the time base of the congestion
// logs.
//
//iba:attr id=0x18 methods=CongestionGet
type TimeStamp struct {
	TimeStamp uint32 `iba:"off=0,bits=32,label=Timestamp"`
}
